//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const clientBlock = `
client {
  enabled = true
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`

// taskPIDs reads the PIDs the task wrote, one per start.
func taskPIDs(t *testing.T, dataDir, allocID string) []int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dataDir, "alloc", allocID, "sh", "local", "starts"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		pid, err := strconv.Atoi(f)
		must.NoError(t, err)
		out = append(out, pid)
	}
	return out
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie has ended; only its parent has not reaped it yet.
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// TestReattach_Kill9 kills the agent while a raw_exec task runs, starts it again on the same
// data dir, and finds the same process re-attached (reported running, not started again),
// signals and restarts it with the CLI, then stops it with `nomad alloc stop` and the job with
// `nomad job stop`.
func TestReattach_Kill9(t *testing.T) {
	dataDir := t.TempDir()
	config, url := writeConfig(t, dataDir, clientBlock)
	agent := startAgent(t, config, url)
	c := agent.client()

	job := api.NewServiceJob("keep", "keep", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("sh", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", `echo $$ >> "$NOMAD_TASK_DIR/starts"
trap 'echo hup >> "$NOMAD_TASK_DIR/signals"' HUP
while true; do sleep 0.1; done`}}
	job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	var allocID string
	waitUntil(t, 30*time.Second, "the allocation to run", func() bool {
		allocs, _, err := c.Jobs().Allocations("keep", false, nil)
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false
		}
		allocID = allocs[0].ID
		return len(taskPIDs(t, dataDir, allocID)) == 1
	})
	pid := taskPIDs(t, dataDir, allocID)[0]
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })

	agent.kill9()
	must.True(t, alive(pid), must.Sprint("the task outlives the agent"))

	agent = startAgent(t, config, url)
	c = agent.client()
	waitUntil(t, 30*time.Second, "the restarted agent to report the task", func() bool {
		a, _, err := c.Allocations().Info(allocID, nil)
		return err == nil && a.ClientStatus == "running" && strings.Contains(agent.logs.String(), "re-attached to task")
	})
	must.Eq(t, []int{pid}, taskPIDs(t, dataDir, allocID), must.Sprint("the task was started once"))
	must.True(t, alive(pid))

	// The re-attached task takes signals, and restarts in place.
	out, code := cli(t, url, "", "alloc", "signal", "-s", "SIGHUP", allocID, "sh")
	must.Eq(t, 0, code, must.Sprint(out))
	signals := filepath.Join(dataDir, "alloc", allocID, "sh", "local", "signals")
	waitUntil(t, 10*time.Second, "the signal", func() bool {
		raw, _ := os.ReadFile(signals)
		return string(raw) == "hup\n"
	})
	out, code = cli(t, url, "", "alloc", "restart", allocID)
	must.Eq(t, 0, code, must.Sprint(out))
	waitUntil(t, 20*time.Second, "the restart", func() bool { return len(taskPIDs(t, dataDir, allocID)) == 2 })
	waitUntil(t, 20*time.Second, "the re-attached process to end", func() bool { return !alive(pid) })
	pid = taskPIDs(t, dataDir, allocID)[1]
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	waitUntil(t, 20*time.Second, "the restarted task to run", func() bool {
		a, _, err := c.Allocations().Info(allocID, nil)
		return err == nil && a.ClientStatus == "running" && a.TaskStates["sh"].Restarts == 1 && alive(pid)
	})

	// Stopped through the CLI: the task's process goes, and a replacement runs.
	out, code = cli(t, url, "", "alloc", "stop", allocID)
	must.Eq(t, 0, code, must.Sprint(out))
	waitUntil(t, 30*time.Second, "the task's process to end", func() bool { return !alive(pid) })
	var replacement string
	waitUntil(t, 30*time.Second, "the replacement to run", func() bool {
		allocs, _, err := c.Jobs().Allocations("keep", false, nil)
		if err != nil {
			return false
		}
		for _, a := range allocs {
			if a.ID != allocID && a.ClientStatus == "running" {
				replacement = a.ID
				return len(taskPIDs(t, dataDir, a.ID)) == 1
			}
		}
		return false
	})
	newPID := taskPIDs(t, dataDir, replacement)[0]
	t.Cleanup(func() { _ = syscall.Kill(-newPID, syscall.SIGKILL) })

	out, code = cli(t, url, "", "job", "stop", "keep")
	must.Eq(t, 0, code, must.Sprint(out))
	waitUntil(t, 30*time.Second, "the replacement to end", func() bool { return !alive(newPID) })
	a, _, err := c.Allocations().Info(allocID, nil)
	must.NoError(t, err)
	must.Eq(t, "complete", a.ClientStatus)
}

// TestReattach_ExitWhileDown: a raw_exec or exec task that ends while its agent is down
// (kill -9) is reported, once the agent is back, with the exit code its shim recorded, and
// is not started again.
func TestReattach_ExitWhileDown(t *testing.T) {
	for _, driver := range []string{"raw_exec", "exec"} {
		t.Run(driver, func(t *testing.T) {
			if driver == "exec" {
				requireRoot(t)
			}
			testExitWhileDown(t, driver)
		})
	}
}

func testExitWhileDown(t *testing.T, driver string) {
	dataDir := t.TempDir()
	config, url := writeConfig(t, dataDir, clientBlock)
	agent := startAgent(t, config, url)
	c := agent.client()

	job := api.NewBatchJob("gated", "gated", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("sh", driver)
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c",
		`echo $$ >> "$NOMAD_TASK_DIR/starts"; while [ ! -e "$NOMAD_TASK_DIR/go" ]; do sleep 0.1; done; exit 7`}}
	group := api.NewTaskGroup("g", 1).AddTask(task)
	group.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	job.AddTaskGroup(group)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	var allocID string
	waitUntil(t, 30*time.Second, "the allocation to run", func() bool {
		allocs, _, err := c.Jobs().Allocations("gated", false, nil)
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false
		}
		allocID = allocs[0].ID
		return len(taskPIDs(t, dataDir, allocID)) == 1
	})
	starts := taskPIDs(t, dataDir, allocID)
	pid := starts[0]
	if driver == "exec" {
		// PID 1 of its namespace: the host knows it by another number.
		pid = hostPIDOf(t, allocID, "sh")
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	agent.kill9()
	must.NoError(t, os.WriteFile(filepath.Join(dataDir, "alloc", allocID, "sh", "local", "go"), nil, 0o644))
	waitUntil(t, 10*time.Second, "the task to end", func() bool { return !alive(pid) })

	agent = startAgent(t, config, url)
	c = agent.client()
	waitUntil(t, 30*time.Second, "the exit reported", func() bool {
		a, _, err := c.Allocations().Info(allocID, nil)
		return err == nil && a.ClientStatus == "failed"
	})
	a, _, err := c.Allocations().Info(allocID, nil)
	must.NoError(t, err)
	var code = -1
	for _, e := range a.TaskStates["sh"].Events {
		if e.Type == "Terminated" {
			code = e.ExitCode
		}
	}
	must.Eq(t, 7, code)
	must.Eq(t, starts, taskPIDs(t, dataDir, allocID), must.Sprint("not started again"))
}
