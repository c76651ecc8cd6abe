//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// The two plain raw_exec jobs of the task-semantics issue, against the binary: a service
// whose prestart task runs once, to completion, before main, then a poststart sidecar; and a
// batch job whose leader's end stops the helper before the poststop task runs.
func TestLifecycle_Binary(t *testing.T) {
	cfg, url := writeConfig(t, t.TempDir(), rawExecClientConfig)
	a := startAgent(t, cfg, url)
	c := a.client()

	sh := func(name, script string) *api.Task {
		task := api.NewTask(name, "raw_exec")
		task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", script}}
		task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
		return task
	}
	taskStates := func(jobID string) (string, map[string]*api.TaskState) {
		allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil || len(allocs) != 1 {
			return "", nil
		}
		alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
		if err != nil {
			return "", nil
		}
		return alloc.ClientStatus, alloc.TaskStates
	}

	t.Run("prestart, main, poststart sidecar", func(t *testing.T) {
		job := api.NewServiceJob("svc", "svc", "global", 50)
		job.Datacenters = []string{"dc1"}
		pre := sh("init", `echo init >> "$NOMAD_ALLOC_DIR/data/order"; sleep 1; echo init-done >> "$NOMAD_ALLOC_DIR/data/order"`)
		pre.Lifecycle = &api.TaskLifecycle{Hook: "prestart"}
		side := sh("side", `echo side >> "$NOMAD_ALLOC_DIR/data/order"; exec sleep 600`)
		side.Lifecycle = &api.TaskLifecycle{Hook: "poststart", Sidecar: true}
		group := api.NewTaskGroup("g", 1).AddTask(pre).AddTask(sh("main", `echo main >> "$NOMAD_ALLOC_DIR/data/order"; exec sleep 600`)).AddTask(side)
		// A restart delay of a second: a prestart task that the restart policy re-ran (as
		// this build once did, every 15s by default) would show within the wait below.
		group.RestartPolicy = &api.RestartPolicy{Attempts: new(3), Interval: new(time.Minute), Delay: new(time.Second), Mode: new("delay")}
		job.AddTaskGroup(group)
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
		t.Cleanup(func() { stopJob(t, c, "svc") })
		var states map[string]*api.TaskState
		waitUntil(t, 60*time.Second, "main and the sidecar running after init completed", func() bool {
			_, states = taskStates("svc")
			return states != nil && states["init"] != nil && states["init"].State == "dead" &&
				states["main"] != nil && states["main"].State == "running" &&
				states["side"] != nil && states["side"].State == "running"
		})
		must.False(t, states["init"].Failed)
		must.Zero(t, states["init"].Restarts, must.Sprint("a prestart task that succeeded runs once"))
		must.False(t, states["main"].StartedAt.Before(states["init"].FinishedAt))
		must.False(t, states["side"].StartedAt.Before(states["main"].StartedAt))
		// What the tasks wrote: init ran once and finished before main or the sidecar began.
		var order []string
		waitUntil(t, 20*time.Second, "every task's line in alloc/data/order", func() bool {
			order = strings.Fields(catAllocFile(a, "svc", "alloc/data/order"))
			return len(order) == 4
		})
		must.Eq(t, []string{"init", "init-done"}, order[:2])
		said := false
		for _, e := range states["main"].Events {
			said = said || (e.Type == "Task hook message" && strings.Contains(e.DisplayMessage, "prestart tasks to complete: init"))
		}
		must.True(t, said, must.Sprint("main said what it waited for"))
		must.SliceContainsAll(t, []string{"main", "side"}, order[2:])

		// Several restart delays later, init has still run once and the others still run.
		time.Sleep(4 * time.Second)
		status, states := taskStates("svc")
		must.Eq(t, "running", status)
		must.Eq(t, "dead", states["init"].State)
		must.Zero(t, states["init"].Restarts)
		must.Eq(t, "running", states["main"].State)
		must.Eq(t, "running", states["side"].State)
		must.Eq(t, order, strings.Fields(catAllocFile(a, "svc", "alloc/data/order")))
	})

	t.Run("leader, helper, poststop", func(t *testing.T) {
		job := api.NewBatchJob("lead", "lead", "global", 50)
		job.Datacenters = []string{"dc1"}
		leader := sh("leader", `sleep 2; echo leader-end >> "$NOMAD_ALLOC_DIR/data/order"`)
		leader.Leader = true
		post := sh("cleanup", `echo cleanup >> "$NOMAD_ALLOC_DIR/data/order"`)
		post.Lifecycle = &api.TaskLifecycle{Hook: "poststop"}
		job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(leader).AddTask(sh("helper", `trap 'echo helper-stopped >> "$NOMAD_ALLOC_DIR/data/order"; exit 0' TERM; while true; do sleep 0.1; done`)).AddTask(post))
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
		t.Cleanup(func() { stopJob(t, c, "lead") })
		var status string
		var states map[string]*api.TaskState
		waitUntil(t, 60*time.Second, "the allocation complete", func() bool {
			status, states = taskStates("lead")
			return status == "complete"
		})
		helper, cleanup := states["helper"], states["cleanup"]
		must.Eq(t, "dead", helper.State)
		killedForLeader := false
		for _, e := range helper.Events {
			killedForLeader = killedForLeader || e.Type == "Leader Task Dead"
		}
		must.True(t, killedForLeader, must.Sprint("the helper was stopped because the leader ended"))
		must.Eq(t, "dead", cleanup.State)
		must.False(t, cleanup.Failed)
		must.False(t, cleanup.StartedAt.Before(helper.FinishedAt), must.Sprint("poststop ran after the others ended"))
		// What the tasks wrote: the leader ended, then the helper was stopped, then poststop ran.
		must.Eq(t, []string{"leader-end", "helper-stopped", "cleanup"}, strings.Fields(catAllocFile(a, "lead", "alloc/data/order")))
	})
}

// catAllocFile reads a file of the job's only allocation through the agent; "" until it is
// there.
func catAllocFile(a *agentProc, jobID, path string) string {
	c := a.client()
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil || len(allocs) != 1 {
		return ""
	}
	resp, err := http.Get(c.Address() + "/v1/client/fs/cat/" + allocs[0].ID + "?path=" + path)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}
