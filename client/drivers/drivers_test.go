package drivers

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func taskConfig(t *testing.T, config map[string]any) *TaskConfig {
	t.Helper()
	dir := t.TempDir()
	return &TaskConfig{
		AllocID: "alloc-1", TaskName: "task", Config: config,
		Env:        map[string]string{"GREETING": "hello", "NOMAD_TASK_NAME": "task"},
		TaskDir:    dir,
		AllocDir:   dir,
		StdoutPath: filepath.Join(dir, "task.stdout.0"),
		StderrPath: filepath.Join(dir, "task.stderr.0"),
	}
}

func waitResult(t *testing.T, h TaskHandle, limit time.Duration) *ExitResult {
	t.Helper()
	select {
	case res := <-h.WaitCh():
		must.NotNil(t, res)
		return res
	case <-time.After(limit):
		t.Fatalf("task did not end within %s", limit)
		return nil
	}
}

func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		raw, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRawExec_ExitCodeOutputAndEnv(t *testing.T) {
	cfg := taskConfig(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", `echo "$GREETING from $NOMAD_TASK_NAME in $(pwd)"; echo oops >&2; exit 3`}})
	h, err := RawExec{}.Start(cfg)
	must.NoError(t, err)
	must.Positive(t, h.PID())
	res := waitResult(t, h, 5*time.Second)
	must.Eq(t, 3, res.ExitCode)
	must.False(t, res.Successful())
	out, err := os.ReadFile(cfg.StdoutPath)
	must.NoError(t, err)
	must.Eq(t, "hello from task in "+cfg.TaskDir+"\n", string(out))
	errOut, err := os.ReadFile(cfg.StderrPath)
	must.NoError(t, err)
	must.Eq(t, "oops\n", string(errOut))
}

// TestRawExec_KillReachesTheProcessGroup: SIGTERM goes to the task's whole process group.
func TestRawExec_KillReachesTheProcessGroup(t *testing.T) {
	cfg := taskConfig(t, map[string]any{"command": "/bin/sh", "args": []string{"-c", `sleep 600 & echo $! > child.pid; wait`}})
	h, err := RawExec{}.Start(cfg)
	must.NoError(t, err)
	child := readPID(t, filepath.Join(cfg.TaskDir, "child.pid"))
	must.NoError(t, h.Kill(5*time.Second))
	res := waitResult(t, h, 5*time.Second)
	must.Eq(t, int(syscall.SIGTERM), res.Signal)
	must.False(t, res.Successful())
	deadline := time.Now().Add(5 * time.Second)
	for !gone(child) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d survived the kill", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRawExec_KillEscalates: a task that ignores SIGTERM gets SIGKILL after the timeout.
func TestRawExec_KillEscalates(t *testing.T) {
	cfg := taskConfig(t, map[string]any{"command": "/bin/sh", "args": []string{"-c", `trap '' TERM; echo ready > ready; sleep 600 & wait`}})
	h, err := RawExec{}.Start(cfg)
	must.NoError(t, err)
	readyDeadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(cfg.TaskDir, "ready")); err == nil {
			break
		}
		if time.Now().After(readyDeadline) {
			t.Fatal("task never got ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	must.NoError(t, h.Kill(200*time.Millisecond))
	res := waitResult(t, h, 5*time.Second)
	must.Eq(t, int(syscall.SIGKILL), res.Signal)
	must.Greater(t, 150*time.Millisecond, time.Since(start))
}

func TestRawExec_BadConfig(t *testing.T) {
	cases := []struct {
		name    string
		config  map[string]any
		wantErr string
	}{
		{name: "no command", config: map[string]any{}, wantErr: `config "command" is required`},
		{name: "command not a string", config: map[string]any{"command": 3}, wantErr: `config "command" must be a string`},
		{name: "args not strings", config: map[string]any{"command": "/bin/true", "args": []any{1}}, wantErr: `config "args"[0] must be a string`},
		{name: "no such command", config: map[string]any{"command": "/no/such/binary"}, wantErr: "starting"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RawExec{}.Start(taskConfig(t, tc.config))
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestMock(t *testing.T) {
	h, err := Mock{}.Start(taskConfig(t, map[string]any{"run_for": "10ms", "exit_code": float64(2)}))
	must.NoError(t, err)
	must.Eq(t, 2, waitResult(t, h, 5*time.Second).ExitCode)

	h, err = Mock{}.Start(taskConfig(t, map[string]any{"run_for": "1h"}))
	must.NoError(t, err)
	must.NoError(t, h.Kill(time.Second))
	must.Eq(t, int(syscall.SIGTERM), waitResult(t, h, 5*time.Second).Signal)

	cfg := taskConfig(t, map[string]any{"stdout_string": "1\n2\n"})
	h, err = Mock{}.Start(cfg)
	must.NoError(t, err)
	must.Eq(t, 0, waitResult(t, h, 5*time.Second).ExitCode)
	out, err := os.ReadFile(cfg.StdoutPath)
	must.NoError(t, err)
	must.Eq(t, "1\n2\n", string(out))

	_, err = Mock{}.Start(taskConfig(t, map[string]any{"start_error": "no luck"}))
	must.ErrorContains(t, err, "no luck")
	_, err = Mock{}.Start(taskConfig(t, map[string]any{"run_for": "soon"}))
	must.ErrorContains(t, err, "run_for")
}

func TestExitResult_String(t *testing.T) {
	cases := []struct {
		name string
		res  ExitResult
		want string
		ok   bool
	}{
		{name: "exit 0", res: ExitResult{}, want: "exit code 0", ok: true},
		{name: "exit 3", res: ExitResult{ExitCode: 3}, want: "exit code 3"},
		{name: "signal", res: ExitResult{Signal: 15}, want: "killed by signal 15"},
		{name: "oom killed", res: ExitResult{Signal: 9, OOMKilled: true}, want: "OOM Killed (signal 9)"},
		{name: "oom killed child", res: ExitResult{ExitCode: 137, OOMKilled: true}, want: "OOM Killed (exit code 137)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, tc.res.String())
			must.Eq(t, tc.ok, tc.res.Successful())
		})
	}
}

// TestRawExec_KillSignal: a stop sends the task's kill_signal first, so a task that exits
// cleanly on it (here SIGINT, trapped) ends with its own exit code, not a SIGKILL.
func TestRawExec_KillSignal(t *testing.T) {
	cfg := taskConfig(t, map[string]any{"command": "/bin/sh", "args": []string{"-c", `trap 'echo got-int; exit 7' INT; echo ready > ready; while :; do sleep 0.05; done`}})
	cfg.KillSignal = "SIGINT"
	h, err := RawExec{}.Start(cfg)
	must.NoError(t, err)
	readPIDFile := filepath.Join(cfg.TaskDir, "ready")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(readPIDFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("task never got ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	must.NoError(t, h.Kill(10*time.Second))
	res := waitResult(t, h, 10*time.Second)
	must.Eq(t, 7, res.ExitCode, must.Sprintf("result %s", res))
	out, err := os.ReadFile(cfg.StdoutPath)
	must.NoError(t, err)
	must.StrContains(t, string(out), "got-int")

	bad := taskConfig(t, map[string]any{"command": "/bin/true"})
	bad.KillSignal = "SIGNOPE"
	_, err = RawExec{}.Start(bad)
	must.ErrorContains(t, err, "kill_signal")
}

// TestRawExec_User: the task runs as its `user`; the shim (the agent's user) still records
// its exit beside it.
func TestRawExec_User(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a task as another user needs root")
	}
	cfg := taskConfig(t, map[string]any{"command": "/bin/sh", "args": []string{"-c", "id -u; id -g; exit 4"}})
	cfg.User = "nobody"
	h, err := RawExec{}.Start(cfg)
	must.NoError(t, err)
	res := waitResult(t, h, 10*time.Second)
	must.Eq(t, 4, res.ExitCode, must.Sprintf("result %s", res))
	out, err := os.ReadFile(cfg.StdoutPath)
	must.NoError(t, err)
	must.StrHasPrefix(t, "65534\n", string(out))

	bad := taskConfig(t, map[string]any{"command": "/bin/true"})
	bad.User = "no-such-user-here"
	_, err = RawExec{}.Start(bad)
	must.ErrorContains(t, err, `raw_exec: user "no-such-user-here"`)
}
