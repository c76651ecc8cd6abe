//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestExecDriver_Binary runs an exec task with the built binary, which starts itself again
// as the task's init (main's hidden executor-init): the task is PID 1 of its namespace, runs
// as nobody, and `nomad alloc exec` runs inside it.
func TestExecDriver_Binary(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the exec driver needs Linux and root, which CI has")
		}
		t.Skip("the exec driver needs Linux and root")
	}
	cfg, url := writeConfig(t, t.TempDir(), "client {\n  enabled = true\n}\n")
	a := startAgent(t, cfg, url)
	c := a.client()

	job := api.NewServiceJob("iso", "iso", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("sh", "exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", `echo "pid=$$ uid=$(id -u)"; exec sleep 600`}}
	task.Resources = &api.Resources{CPU: new(100), MemoryMB: new(64)}
	job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	var allocID string
	waitUntil(t, 30*time.Second, "the exec allocation to run", func() bool {
		allocs, _, err := c.Jobs().Allocations("iso", false, nil)
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false
		}
		allocID = allocs[0].ID
		return true
	})
	var body string
	waitUntil(t, 20*time.Second, "the task's output", func() bool {
		resp, err := http.Get(url + "/v1/client/fs/logs/" + allocID + "?task=sh&type=stdout&plain=true")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == 200 && body != ""
	})
	must.Eq(t, "pid=1 uid=65534\n", body)

	out, code := cli(t, url, "", "alloc", "exec", "-t=false", allocID, "/bin/sh", "-c", `id -u; tr '\0' ' ' < /proc/1/cmdline`)
	must.Eq(t, 0, code, must.Sprint(out))
	must.Eq(t, "65534\nsleep 600 ", strings.TrimRight(out, "\n"))

	// Stopped through the agent, the task goes with its cgroup; killing the agent would leave
	// it running, as tasks outlive their agent.
	_, _, err = c.Jobs().Deregister("iso", false, nil)
	must.NoError(t, err)
	waitUntil(t, 30*time.Second, "the exec allocation to stop", func() bool {
		alloc, _, err := c.Allocations().Info(allocID, nil)
		return err == nil && alloc.ClientStatus == "complete"
	})
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		dir := "/sys/fs/cgroup/" + ctrl + "/nomad/" + allocID + ".sh"
		waitUntil(t, 10*time.Second, "the task's cgroup to go", func() bool {
			_, err := os.Stat(dir)
			return os.IsNotExist(err)
		})
	}
}
