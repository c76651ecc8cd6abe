//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestExecDriver_OOMKilledEvent: an exec task that goes over its memory limit is killed by
// the kernel at that limit, and the task event says so.
func TestExecDriver_OOMKilledEvent(t *testing.T) {
	requireRoot(t)
	cfg, url := writeConfig(t, t.TempDir(), clientBlock)
	c := startAgent(t, cfg, url).client()

	job := api.NewBatchJob("hog", "hog", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("box", "exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", "dd if=/dev/zero of=/dev/null bs=96M count=1"}}
	task.Resources = &api.Resources{CPU: new(100), MemoryMB: new(16)}
	group := api.NewTaskGroup("g", 1).AddTask(task)
	group.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	group.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
	job.AddTaskGroup(group)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	var alloc *api.Allocation
	waitUntil(t, 60*time.Second, "the allocation to fail", func() bool {
		allocs, _, err := c.Jobs().Allocations("hog", false, nil)
		if err != nil || len(allocs) == 0 || allocs[0].ClientStatus != "failed" {
			return false
		}
		alloc, _, err = c.Allocations().Info(allocs[0].ID, nil)
		return err == nil
	})
	var terminated *api.TaskEvent
	for _, e := range alloc.TaskStates["box"].Events {
		if e.Type == "Terminated" {
			terminated = e
		}
	}
	must.NotNil(t, terminated, must.Sprint(taskEvents(alloc.TaskStates)))
	must.StrContains(t, terminated.DisplayMessage, "OOM Killed")
	must.Eq(t, "true", terminated.Details["oom_killed"])
}

// tmuxSession is a tmux server of the test's own (its own socket) with one session.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	must.NoError(s.t, err, must.Sprintf("tmux %v: %s", args, out))
	return string(out)
}

// screen is what the session's pane shows.
func (s *tmuxSession) screen() string {
	out, _ := exec.Command("tmux", "-L", s.socket, "capture-pane", "-p", "-t", "s").CombinedOutput()
	return string(out)
}

func (s *tmuxSession) waitScreen(what, want string) {
	s.t.Helper()
	ok := false
	defer func() {
		if !ok {
			s.t.Logf("screen:\n%s", s.screen())
		}
	}()
	waitUntil(s.t, 20*time.Second, what, func() bool { return strings.Contains(s.screen(), want) })
	ok = true
}

// TestAllocExec_TTYInTmux drives an interactive `nomad alloc exec -t` in a terminal (a tmux
// pane), for a raw_exec and an exec task: the shell shows its prompt on a pseudo-terminal,
// runs a command typed at it, and the CLI exits with the code the shell exited with.
func TestAllocExec_TTYInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing in CI (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	cfg, url := writeConfig(t, t.TempDir(), clientBlock)
	c := startAgent(t, cfg, url).client()

	drivers := []string{"raw_exec"}
	if os.Geteuid() == 0 {
		drivers = append(drivers, "exec")
	}
	for _, driver := range drivers {
		t.Run(driver, func(t *testing.T) {
			jobID := "tty-" + strings.ReplaceAll(driver, "_", "-")
			job := api.NewServiceJob(jobID, jobID, "global", 50)
			job.Datacenters = []string{"dc1"}
			task := api.NewTask("sh", driver)
			task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"600"}}
			task.Resources = &api.Resources{CPU: new(100), MemoryMB: new(64)}
			job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
			_, _, err := c.Jobs().Register(job, nil)
			must.NoError(t, err)
			t.Cleanup(func() { stopJob(t, c, jobID) })
			var allocID string
			waitUntil(t, 30*time.Second, "the allocation to run", func() bool {
				allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
				if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
					return false
				}
				allocID = allocs[0].ID
				return true
			})

			dir := t.TempDir()
			codeFile := filepath.Join(dir, "code")
			script := filepath.Join(dir, "session.sh")
			must.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n"+
				"NOMAD_ADDR="+url+" '"+binary(t)+"' alloc exec -t "+allocID+" /usr/bin/env 'PS1=e2e-prompt$ ' /bin/sh\n"+
				"echo \"exit=$?\" > "+codeFile+"\n"+
				"sleep 600\n"), 0o755))
			s := &tmuxSession{t: t, socket: "nomad-e2e-" + jobID}
			s.run("new-session", "-d", "-s", "s", "-x", "120", "-y", "30", script)
			t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })

			s.waitScreen("the prompt", "e2e-prompt$")
			s.run("send-keys", "-t", "s", "test -t 0 && test -t 1 && echo term=yes; echo answer=$((6*7))", "Enter")
			s.waitScreen("the command's output", "answer=42")
			must.StrContains(t, s.screen(), "term=yes", must.Sprintf("the shell runs on a pseudo-terminal; screen:\n%s", s.screen()))
			s.run("send-keys", "-t", "s", "exit 5", "Enter")
			waitUntil(t, 20*time.Second, "the CLI to exit", func() bool {
				raw, _ := os.ReadFile(codeFile)
				return len(raw) > 0
			})
			raw, err := os.ReadFile(codeFile)
			must.NoError(t, err)
			must.Eq(t, "exit=5\n", string(raw), must.Sprintf("screen:\n%s", s.screen()))
		})
	}
}
