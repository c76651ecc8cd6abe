package agent

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// healthServer answers 200 on /ok and 500 on anything else.
func healthServer(t *testing.T) int {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ok" {
			http.Error(w, "not healthy", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// checkedJob is a raw_exec service job of count 2 whose group service has an http check on
// the test's server at path, deployed one allocation at a time with health_check "checks".
func checkedJob(id string, port int, path string) *api.Job {
	job := testJob(id)
	tg := job.TaskGroups[0]
	tg.Count = new(2)
	tg.Services = []*api.Service{{Name: id + "-web", Provider: "nomad", Address: "127.0.0.1", PortLabel: strconv.Itoa(port),
		Checks: []api.ServiceCheck{{Name: "alive", Type: "http", Path: path, Interval: time.Second, Timeout: time.Second}}}}
	tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	job.Update = &api.UpdateStrategy{MaxParallel: new(1), HealthCheck: new("checks"), MinHealthyTime: new(200 * time.Millisecond),
		HealthyDeadline: new(3 * time.Second), ProgressDeadline: new(30 * time.Second), AutoRevert: new(true)}
	return job
}

func rawExecAgent(t *testing.T) *TestAgent {
	return NewTestClientAgent(t, func(c *Config) {
		c.Plugins = append(c.Plugins, &PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	})
}

// TestAllocChecks_OfficialClient reads the check results through the official client's
// Allocations().Checks.
func TestAllocChecks_OfficialClient(t *testing.T) {
	ta := rawExecAgent(t)
	c := ta.Client("")
	port := healthServer(t)
	job := checkedJob("chk", port, "/ok")
	job.TaskGroups[0].Count = new(1)
	alloc := runningAlloc(t, c, job)
	var got api.AllocCheckStatus
	eventually(t, 20*time.Second, "the check to pass", func() (bool, string) {
		st, err := c.Allocations().Checks(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, s := range st {
			got = s
		}
		return len(st) == 1 && got.Status == "success", ""
	})
	must.Eq(t, "alive", got.Check)
	must.Eq(t, "chk-web", got.Service)
	must.Eq(t, alloc.Name, got.Group)
	must.Eq(t, "", got.Task)
	must.Eq(t, "healthiness", got.Mode)
	must.Eq(t, 200, got.StatusCode)
	must.Eq(t, "nomad: http ok", got.Output)
	must.Eq(t, 32, len(got.ID))
	must.Positive(t, got.Timestamp)

	_, err := c.Allocations().Checks("00000000-0000-0000-0000-000000000000", nil)
	status, _ := responseError(t, err)
	must.Eq(t, 404, status)
}

// TestDeployments_FailingCheckAutoReverts: a version whose http check fails never becomes
// healthy: its deployment fails at the healthy deadline and auto_revert goes back to the last
// stable version, whose check passes.
func TestDeployments_FailingCheckAutoReverts(t *testing.T) {
	ta := rawExecAgent(t)
	c := ta.Client("")
	port := healthServer(t)

	_, _, err := c.Jobs().Register(checkedJob("ck", port, "/ok"), nil)
	must.NoError(t, err)
	first := deploymentOf(t, c, "ck", 0, "successful")
	must.Eq(t, 2, first.TaskGroups["web"].HealthyAllocs)
	stableVersion(t, c, "ck", 0)

	_, _, err = c.Jobs().Register(checkedJob("ck", port, "/broken"), nil)
	must.NoError(t, err)
	failed := deploymentOf(t, c, "ck", 1, "failed")
	must.Eq(t, "Failed due to unhealthy allocations - rolling back to job version 0", failed.StatusDescription)
	must.Eq(t, 1, failed.TaskGroups["web"].UnhealthyAllocs)
	// The failing allocation ran: its task was fine, its check was not.
	allocs, _, err := c.Deployments().Allocations(failed.ID, nil)
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	must.False(t, *allocs[0].DeploymentStatus.Healthy)
	must.Eq(t, "running", allocs[0].TaskStates["sleep"].State)

	reverted := deploymentOf(t, c, "ck", 2, "successful")
	must.Eq(t, 2, reverted.TaskGroups["web"].HealthyAllocs)
	job, _, err := c.Jobs().Info("ck", nil)
	must.NoError(t, err)
	must.Eq(t, "/ok", job.TaskGroups[0].Services[0].Checks[0].Path)
}
