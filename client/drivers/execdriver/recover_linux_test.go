package execdriver

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// restartedState is a task's handle state as a restarted agent reads it from its state
// file: through JSON.
func restartedState(t *testing.T, h drivers.TaskHandle) *drivers.HandleState {
	t.Helper()
	p, ok := h.(drivers.Persistent)
	must.True(t, ok, must.Sprint("an exec handle says how to find its task again"))
	raw, err := json.Marshal(p.HandleState())
	must.NoError(t, err)
	var st drivers.HandleState
	must.NoError(t, json.Unmarshal(raw, &st))
	return &st
}

func awaitResult(t *testing.T, h drivers.TaskHandle) *drivers.ExitResult {
	t.Helper()
	select {
	case res := <-h.WaitCh():
		return res
	case <-time.After(30 * time.Second):
		t.Fatal("task did not end")
	}
	return nil
}

// TestExecDriver_RecoverRunning: a second driver (a restarted agent) finds a running task
// by its shim, and it is the same process, controllable as before: alloc exec joins it,
// alloc signal reaches it, a kill stops it and its exit code comes from the shim.
func TestExecDriver_RecoverRunning(t *testing.T) {
	requireIsolation(t)
	first := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c",
		`trap 'echo hup >> /local/signals' HUP; trap 'exit 3' TERM; echo started; while :; do sleep 0.05; done`}})
	h, err := first.Start(cfg)
	must.NoError(t, err)
	t.Cleanup(func() {
		_ = h.Kill(0)
		<-h.WaitCh()
	})
	waitForFile(t, cfg.StdoutPath, "started\n")
	st := restartedState(t, h)
	must.Eq(t, "exec", st.Driver)
	must.Eq(t, h.PID(), st.TaskPID)
	must.Positive(t, st.PID)
	must.NotEq(t, st.PID, st.TaskPID, must.Sprint("the shim is not the task"))

	second := New(Options{})
	rh, err := second.Recover(cfg, st)
	must.NoError(t, err)
	must.Eq(t, h.PID(), rh.PID(), must.Sprint("re-attached to the same process, not a new one"))

	var stdout syncBuffer
	code, err := second.Exec(context.Background(), cfg, &drivers.ExecOptions{
		Command: []string{"/bin/sh", "-c", `tr '\0' ' ' < /proc/1/cmdline; exit 4`}, Stdout: &stdout,
	})
	must.NoError(t, err)
	must.Eq(t, 4, code)
	must.StrContains(t, stdout.String(), "while :")

	must.NoError(t, rh.Signal(syscall.SIGHUP))
	waitForFile(t, cfg.TaskDir+"/local/signals", "hup\n")

	must.NoError(t, rh.Kill(20*time.Second))
	res := awaitResult(t, rh)
	must.Eq(t, 3, res.ExitCode, must.Sprintf("result %s", res))
	must.NoError(t, res.Err)
	for _, dir := range st.Cgroups {
		_, err := os.Stat(dir)
		must.ErrorIs(t, err, os.ErrNotExist)
	}
	_, err = second.Exec(context.Background(), cfg, &drivers.ExecOptions{Command: []string{"true"}})
	must.ErrorContains(t, err, "is not running")
}

// TestExecDriver_RecoverExitedWhileDown: a task that ended while no agent ran is reported
// with the exit code its shim recorded, OOM kills included.
func TestExecDriver_RecoverExitedWhileDown(t *testing.T) {
	requireIsolation(t)
	cases := []struct {
		name    string
		script  string
		memory  int
		wantRes func(t *testing.T, res *drivers.ExitResult)
	}{
		{name: "exit code", script: "exit 7", wantRes: func(t *testing.T, res *drivers.ExitResult) {
			must.Eq(t, 7, res.ExitCode)
			must.NoError(t, res.Err)
		}},
		{name: "oom", script: "dd if=/dev/zero of=/dev/null bs=96M count=1", memory: 16, wantRes: func(t *testing.T, res *drivers.ExitResult) {
			must.True(t, res.OOMKilled, must.Sprintf("result %s", res))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := New(Options{})
			cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", tc.script}})
			cfg.Resources.MemoryMB = tc.memory
			h, err := first.Start(cfg)
			must.NoError(t, err)
			st := restartedState(t, h)
			awaitResult(t, h)
			must.False(t, drivers.ProcAlive(st.PID, st.StartTime))

			rh, err := New(Options{}).Recover(cfg, st)
			must.NoError(t, err)
			tc.wantRes(t, awaitResult(t, rh))
		})
	}
}

// TestExecDriver_RecoverNeverAnotherProcess: a handle state whose PID now names another
// process (its start time differs) is not re-attached to, and that process is left alone.
func TestExecDriver_RecoverNeverAnotherProcess(t *testing.T) {
	requireIsolation(t)
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "exit 0"}})
	ticks, err := drivers.ProcStartTime(os.Getpid())
	must.NoError(t, err)
	st := &drivers.HandleState{Driver: "exec", PID: os.Getpid(), StartTime: ticks + 1, ExitFile: exitFilePath(cfg),
		TaskPID: os.Getpid(), TaskStartTime: ticks + 1, Cgroups: []string{t.TempDir() + "/no-such-cgroup"}}
	_, err = New(Options{}).Recover(cfg, st)
	must.ErrorIs(t, err, drivers.ErrTaskNotFound)
	_, err = New(Options{}).Recover(cfg, nil)
	must.ErrorIs(t, err, drivers.ErrTaskNotFound)
}

// TestExecDriver_ShimKilled: a shim killed outright records nothing: the task is removed
// with its cgroup and reported as lost, never as a success.
func TestExecDriver_ShimKilled(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started; exec sleep 300"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	waitForFile(t, cfg.StdoutPath, "started\n")
	st := restartedState(t, h)
	must.NoError(t, syscall.Kill(st.PID, syscall.SIGKILL))
	res := awaitResult(t, h)
	must.Error(t, res.Err)
	must.StrContains(t, res.Err.Error(), "without recording")
	must.False(t, res.Successful())
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return !drivers.ProcAlive(st.TaskPID, st.TaskStartTime)
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
}

// TestExecDriver_SignalKillGoesToTheTask: SIGKILL, which the shim could not forward (it
// would die of it), is sent to the task itself; the shim stays and records it.
func TestExecDriver_SignalKillGoesToTheTask(t *testing.T) {
	requireIsolation(t)
	d := New(Options{})
	cfg := testTask(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", "echo started; exec sleep 300"}})
	h, err := d.Start(cfg)
	must.NoError(t, err)
	waitForFile(t, cfg.StdoutPath, "started\n")
	must.NoError(t, h.Signal(syscall.SIGKILL))
	res := awaitResult(t, h)
	must.Eq(t, int(syscall.SIGKILL), res.Signal, must.Sprintf("result %s", res))
	must.NoError(t, res.Err)
	err = h.Signal(syscall.SIGTERM)
	must.True(t, err != nil && strings.Contains(err.Error(), "not running"), must.Sprintf("error %v", err))
}
