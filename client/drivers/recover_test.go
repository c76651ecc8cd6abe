package drivers

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"golang.org/x/sys/unix"
)

func TestProcStartTime(t *testing.T) {
	start, state, err := procStartTime(os.Getpid())
	must.NoError(t, err)
	must.Positive(t, start)
	must.NotEq(t, byte('Z'), state)
	_, _, err = procStartTime(1 << 30)
	must.ErrorIs(t, err, os.ErrNotExist)
}

func TestParseSignal(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    unix.Signal
		wantErr string
	}{
		{name: "full name", in: "SIGHUP", want: unix.SIGHUP},
		{name: "short name", in: "USR1", want: unix.SIGUSR1},
		{name: "lower case", in: "sigterm", want: unix.SIGTERM},
		{name: "unknown", in: "SIGNOPE", wantErr: `unknown signal "SIGNOPE"`},
		{name: "empty", in: "", wantErr: "no signal given"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSignal(tc.in)
			if tc.wantErr != "" {
				must.EqError(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

// startShimmed starts a raw_exec task and waits for its shim to have started it.
func startShimmed(t *testing.T, cfg *TaskConfig) TaskHandle {
	t.Helper()
	h, err := RawExec{}.Start(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = h.Kill(0) })
	deadline := time.Now().Add(5 * time.Second)
	for taskChild(h.PID(), filepath.Join(cfg.TaskDir, exitFileName)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the shim never started the task")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return h
}

// TestRawExec_Recover: a task is found again by its shim's PID and start time, signalled, and
// its end learnt from the shim's exit file; a state whose start time does not match (the PID
// was reused) finds nothing.
func TestRawExec_Recover(t *testing.T) {
	cfg := taskConfig(t, map[string]any{"command": "/bin/sleep", "args": []any{"600"}})
	h := startShimmed(t, cfg)
	st := h.(Persistent).HandleState()
	must.Eq(t, h.PID(), st.PID)
	must.Positive(t, st.StartTime)
	must.Eq(t, filepath.Join(cfg.TaskDir, exitFileName), st.ExitFile)

	cases := []struct {
		name string
		st   *HandleState
	}{
		{name: "reused PID", st: &HandleState{Driver: "raw_exec", PID: st.PID, StartTime: st.StartTime + 1}},
		{name: "no start time", st: &HandleState{Driver: "raw_exec", PID: st.PID}},
		{name: "no PID", st: &HandleState{Driver: "raw_exec"}},
		{name: "nil", st: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RawExec{}.Recover(cfg, tc.st)
			must.ErrorIs(t, err, ErrTaskNotFound)
		})
	}

	rh, err := RawExec{}.Recover(cfg, st)
	must.NoError(t, err)
	must.Eq(t, st.PID, rh.PID())
	must.NoError(t, rh.Signal(syscall.SIGHUP))
	res := waitResult(t, rh, 10*time.Second)
	must.NoError(t, res.Err)
	must.Eq(t, int(syscall.SIGHUP), res.Signal, must.Sprint("the shim recorded how the task ended"))
	must.Error(t, rh.Signal(syscall.SIGHUP), must.Sprint("an ended task takes no signal"))

	// Ended while no agent watched: known from the exit file alone.
	again, err := RawExec{}.Recover(cfg, st)
	must.NoError(t, err)
	must.Eq(t, int(syscall.SIGHUP), waitResult(t, again, time.Second).Signal)
}

// TestRawExec_RecoverExitLost: a task killed with its shim (SIGKILL to the group) left no exit
// file: its exit code is lost.
func TestRawExec_RecoverExitLost(t *testing.T) {
	cfg := taskConfig(t, map[string]any{"command": "/bin/sleep", "args": []any{"600"}})
	h := startShimmed(t, cfg)
	st := h.(Persistent).HandleState()
	rh, err := RawExec{}.Recover(cfg, st)
	must.NoError(t, err)
	must.NoError(t, syscall.Kill(-st.PID, syscall.SIGKILL))
	res := waitResult(t, rh, 10*time.Second)
	must.ErrorIs(t, res.Err, ErrExitCodeLost)
	_, err = RawExec{}.Recover(cfg, st)
	must.ErrorIs(t, err, ErrTaskNotFound)
}

// TestTaskChild: the task is the PID the shim recorded, and only while that process is still
// the shim's child; without a record (the shim is starting it, or a probe child of Go's
// runtime is the shim's only child) there is no task to signal.
func TestTaskChild(t *testing.T) {
	exitFile := filepath.Join(t.TempDir(), exitFileName)
	must.Zero(t, taskChild(os.Getppid(), exitFile), must.Sprint("no record yet"))

	writeFileWhole(exitFile+taskPIDSuffix, []byte(strconv.Itoa(os.Getpid())))
	must.Eq(t, os.Getpid(), taskChild(os.Getppid(), exitFile))
	must.Zero(t, taskChild(os.Getpid(), exitFile), must.Sprint("the recorded PID is not that shim's child"))

	writeFileWhole(exitFile+taskPIDSuffix, []byte("garbage"))
	must.Zero(t, taskChild(os.Getppid(), exitFile))
}
