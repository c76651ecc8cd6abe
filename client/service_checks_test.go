package client

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/servicecheck"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// onlyCheck waits for the allocation to have exactly one check whose status is want.
func onlyCheck(t *testing.T, c *Client, allocID, want string) api.AllocCheckStatus {
	t.Helper()
	var got api.AllocCheckStatus
	last := ""
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		st, err := c.Checks(allocID)
		if err == nil && len(st) == 1 {
			for _, s := range st {
				got = s
			}
			if got.Status == want {
				return got
			}
		}
		last = fmt.Sprintf("%v %+v", err, st)
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("check never became %s; last: %s", want, last)
	return got
}

// A script check runs its command inside the task through the driver's exec: exit 0 passes,
// 1 warns, anything else fails.
func TestClient_ScriptCheckRunsInTask(t *testing.T) {
	c, s := testClientNoState(t) // its raw_exec task must not outlive the test
	dir := t.TempDir()
	codeFile := filepath.Join(dir, "code")
	must.NoError(t, os.WriteFile(codeFile, []byte("0"), 0o644))
	task := &api.Task{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/sleep", "args": []any{"3600"}}}
	task.Services = []*api.Service{{Name: "web", Provider: ServiceProviderNomad, Checks: []api.ServiceCheck{{
		Name: "script", Type: "script", Command: "/bin/sh",
		// The task's environment proves it runs in the task's context.
		Args:     []string{"-c", `echo "in $NOMAD_TASK_NAME"; exit $(cat ` + codeFile + `)`},
		Interval: 50 * time.Millisecond, Timeout: 5 * time.Second,
	}}}}
	s.setAllocs(testAlloc("a1", structs.JobTypeService, task))
	st := onlyCheck(t, c, "a1", servicecheck.StatusSuccess)
	must.Eq(t, "in t\n", st.Output)
	must.Eq(t, "script", st.Check)
	must.Eq(t, "web", st.Service)
	must.Eq(t, "t", st.Task)
	must.Eq(t, "job.g[0]", st.Group)

	must.NoError(t, os.WriteFile(codeFile, []byte("1"), 0o644))
	st = onlyCheck(t, c, "a1", servicecheck.StatusWarning)
	must.Eq(t, 1, st.StatusCode)
	must.NoError(t, os.WriteFile(codeFile, []byte("2"), 0o644))
	st = onlyCheck(t, c, "a1", servicecheck.StatusFailure)
	must.Eq(t, 2, st.StatusCode)
}

// check_restart restarts the task through its restart path once the check failed limit times
// in a row, with a task event naming the check; the restart counts against the restart policy.
func TestClient_CheckRestartRestartsTask(t *testing.T) {
	_, s := testClient(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	must.NoError(t, l.Close()) // nothing answers: the check fails

	task := mockTask("t", map[string]any{"run_for": "1h"})
	task.Services = []*api.Service{{Name: "web", Provider: ServiceProviderNomad, Address: "127.0.0.1", PortLabel: strconv.Itoa(port),
		Checks: []api.ServiceCheck{{Name: "dead", Type: "tcp", Interval: 30 * time.Millisecond, Timeout: time.Second,
			CheckRestart: &api.CheckRestart{Limit: 2, Grace: new(100 * time.Millisecond)}}}}}
	a := testAlloc("a1", structs.JobTypeService, task)
	a.Job.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: new(5), Interval: new(time.Hour), Delay: new(10 * time.Millisecond)}
	s.setAllocs(a)
	waitFor(t, "the task restarted by its check", func() bool {
		r := s.lastReport("a1")
		return r != nil && r.TaskStates["t"] != nil && r.TaskStates["t"].Restarts >= 1
	})
	r := s.lastReport("a1")
	var signalled *structs.TaskEvent
	for _, e := range r.TaskStates["t"].Events {
		if e.Type == structs.TaskEventRestartSignal {
			signalled = e
		}
	}
	must.NotNil(t, signalled)
	must.Eq(t, `healthcheck: check "dead" unhealthy`, signalled.RestartReason)
	kinds := []string{}
	for _, e := range r.TaskStates["t"].Events {
		kinds = append(kinds, e.Type+":"+e.RestartReason)
	}
	must.SliceContains(t, kinds, structs.TaskEventRestarting+":Restart within policy", must.Sprint("counted against the restart policy"))
}

// An http check of a group service follows the test's server; the allocation's stop ends it.
func TestClient_HTTPCheckStopsWithAlloc(t *testing.T) {
	c, s := testClient(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	a := testAlloc("a1", structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
	a.Job.TaskGroups[0].Services = []*api.Service{{Name: "web", Provider: ServiceProviderNomad, Address: "127.0.0.1",
		PortLabel: strconv.Itoa(port), Checks: []api.ServiceCheck{{Name: "alive", Type: "http", Path: "/",
			Interval: 30 * time.Millisecond, Timeout: time.Second}}}}
	s.setAllocs(a)
	st := onlyCheck(t, c, "a1", servicecheck.StatusSuccess)
	must.Eq(t, "", st.Task, must.Sprint("a group service's check has no task"))
	must.Eq(t, 200, st.StatusCode)

	stopped := *a
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped)
	waitFor(t, "checks stopped", func() bool {
		st, err := c.Checks("a1")
		return err != nil || len(st) == 0
	})
}

// With health_check "checks", running tasks are not enough: the clock starts once every
// healthiness check passes.
func TestAllocHealth_JudgeWithChecks(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	r := &allocRunner{states: map[string]*structs.TaskState{
		"a": {State: structs.TaskStateRunning, StartedAt: time.Now().Add(-time.Hour)},
	}}
	r.checks = servicecheck.NewRunner(hclog.NewNullLogger(), nil, nil, nil)
	defer r.checks.Stop()
	start := time.Now().Add(-time.Hour)

	r.checks.Set([]servicecheck.Spec{{ID: "dead", Name: "dead", Type: "tcp", Address: "127.0.0.1", Port: 1, Interval: time.Hour}})
	got, wait := r.judgeHealth(start, 10*time.Second, true)
	must.Nil(t, got)
	must.Zero(t, wait, must.Sprint("waits for a check result, not a timer"))
	got, _ = r.judgeHealth(start, 10*time.Second, false)
	must.Eq(t, new(true), got, must.Sprint("task_states ignores the checks"))

	r.checks.Set([]servicecheck.Spec{{ID: "up", Name: "up", Type: "tcp", Address: "127.0.0.1", Port: port, Interval: time.Hour}})
	waitFor(t, "check passing", func() bool { ok, _ := r.checks.Healthy(); return ok })
	got, wait = r.judgeHealth(start, 10*time.Second, true)
	must.Nil(t, got)
	must.Greater(t, 9*time.Second, wait, must.Sprint("min_healthy_time counts from the check passing"))
	got, _ = r.judgeHealth(start, 0, true)
	must.Eq(t, new(true), got)
}
