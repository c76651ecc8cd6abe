package execdriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
)

// ttyCancelWait is how long a terminal session's helper has to end its command once the
// session is cancelled, before it is killed.
const ttyCancelWait = 2 * time.Second

// Exec implements drivers.ExecDriver. The agent's binary is started as a helper that joins
// the task's cgroup, namespaces and root and runs the command there as the task's user, with
// the task's environment; the session around it (pipes or a terminal, kill at the end) is
// raw_exec's. A command the helper cannot start answers 127 with the reason on stderr.
func (d *Driver) Exec(ctx context.Context, cfg *drivers.TaskConfig, opts *drivers.ExecOptions) (int, error) {
	if len(opts.Command) == 0 || opts.Command[0] == "" {
		return 0, errors.New("exec: no command to run")
	}
	h := d.running(cfg.AllocID, cfg.TaskName)
	if h == nil {
		return 0, fmt.Errorf("exec: task %q is not running", cfg.TaskName)
	}
	env := h.cfg.Env
	if opts.TTY {
		env = append(append([]string(nil), env...), "TERM=xterm")
	}
	jc := initConfig{
		Join: true, TaskPID: h.state.PID, TaskStartTicks: h.state.StartTicks, Cgroups: h.cg.procsFiles(),
		Command: opts.Command[0], Args: opts.Command[1:], Env: env, UID: h.cfg.UID, GID: h.cfg.GID, Caps: h.cfg.Caps, Ambient: h.cfg.Ambient, Dir: h.cfg.Dir,
	}
	raw, err := json.Marshal(jc)
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, selfExe, InitCommand)
	cmd.Env = []string{joinConfigEnv + "=" + string(raw)}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if opts.TTY {
		// The command leads the terminal's foreground group, out of the helper's: the helper
		// kills it on SIGTERM, and is killed itself if it does not end soon after.
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = ttyCancelWait
	}
	return drivers.RunExec(ctx, "exec", cmd, opts)
}
