package client

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// containerOf is the container ID the client's handle of a task names, "" when none.
func containerOf(c *Client, allocID, task string) string {
	c.mu.Lock()
	r := c.runners[allocID]
	c.mu.Unlock()
	if r == nil {
		return ""
	}
	r.mu.Lock()
	tasks := r.tasks
	r.mu.Unlock()
	for _, tr := range tasks {
		if tr.task.Name != task {
			continue
		}
		if p, ok := tr.runningHandle().(drivers.Persistent); ok {
			return p.HandleState().ContainerID
		}
	}
	return ""
}

// TestClient_ReattachesDocker (docker test gate): a restarted client finds the container of a
// running docker task by ID, keeps it through its dangling-container cleanup, reports it
// running, and stops it when the servers ask.
func TestClient_ReattachesDocker(t *testing.T) {
	cli := dockertest.Client(t)
	dockertest.BuildImage(t, cli)
	r := newRestartable(t)
	task := &api.Task{Name: "web", Driver: "docker", KillSignal: "SIGINT",
		Config: map[string]any{"image": dockertest.Image, "args": []any{"sleep"}}}
	alloc := testAlloc("a1", structs.JobTypeService, task)
	driver := func() []drivers.Driver { return []drivers.Driver{docker.New(docker.Options{AllocRoot: r.allocDir})} }

	c1, s1 := r.startWith(driver(), alloc)
	waitFor(t, "running", reportedStatus(s1, "a1", structs.AllocClientStatusRunning))
	id := containerOf(c1, "a1", "web")
	must.NotEq(t, "", id)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cli.ContainerKill(ctx, id, "SIGKILL")
	})
	stdout := filepath.Join(r.allocDir, "a1", "alloc", "logs", LogFileName("web", "stdout"))
	waitFor(t, "the task's output", func() bool {
		raw, _ := os.ReadFile(stdout)
		return strings.Contains(string(raw), "sleeping")
	})
	c1.Shutdown()

	c2, s2 := r.startWith(driver(), alloc)
	waitFor(t, "re-attached", func() bool { return containerOf(c2, "a1", "web") == id })
	waitFor(t, "reported running", reportedStatus(s2, "a1", structs.AllocClientStatusRunning))
	insp, err := cli.ContainerInspect(context.Background(), id)
	must.NoError(t, err, must.Sprint("the re-attached container survives the cleanup of dangling ones"))
	must.True(t, insp.State.Running)

	stopped := *alloc
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s2.setAllocs(&stopped)
	waitFor(t, "complete", reportedStatus(s2, "a1", structs.AllocClientStatusComplete))
	ev := lastEvent(s2.lastReport("a1"), "web")
	must.Eq(t, structs.TaskEventKilled, ev.Type)
	must.Eq(t, 3, ev.ExitCode, must.Sprint("SIGINT makes the task exit 3"))
	waitFor(t, "the interrupt in the log", func() bool {
		raw, _ := os.ReadFile(stdout)
		return strings.Contains(string(raw), "got interrupt")
	})
}
