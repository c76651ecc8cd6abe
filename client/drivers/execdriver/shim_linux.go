package execdriver

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/nomadfork/nomad/client/drivers"
)

// A task runs under a shim, as raw_exec's do: the agent starts its own binary as the shim, in
// a session of its own and outside the task's namespaces and cgroup; the shim starts the
// task's init (which becomes the command, PID 1 of the task's PID namespace) as its child,
// waits for it and writes how it ended, an OOM kill included, to the task's exit file before
// it removes the task's cgroup. The shim outlives an agent that is killed, so a restarted
// agent re-attaches to it by PID and start time and learns the exit code from the file, even
// for a task that ended while no agent ran. Signals that reach the shim are the task's: it
// forwards every one it can catch to the init (SIGKILL, which it cannot, the agent sends to
// the task's cgroup instead).

// runShim is the shim: it never returns.
func runShim() {
	reply := os.NewFile(initErrorFD, "shim-reply")
	syscall.CloseOnExec(initErrorFD)
	answer := func(r shimReply) {
		raw, _ := json.Marshal(r)
		_, _ = reply.Write(raw)
		_ = reply.Close()
	}
	fail := func(err error) {
		answer(shimReply{Error: err.Error()})
		os.Exit(127)
	}
	raw, err := readConfigFD(initConfigFD, "shim-config")
	if err != nil {
		fail(fmt.Errorf("reading the shim's configuration: %w", err))
	}
	var sc shimConfig
	if err := json.Unmarshal(raw, &sc); err != nil {
		fail(fmt.Errorf("decoding the shim's configuration: %w", err))
	}
	// Caught from before the init starts, so that no signal meant for the task ends the shim.
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs)
	cg := &taskCgroup{mode: sc.CgroupMode, dirs: sc.Cgroups}
	if sc.NetNS != "" {
		// The init is forked from this goroutine's thread, now in the namespace.
		if err := drivers.JoinNetNS(sc.NetNS); err != nil {
			fail(err)
		}
	}
	cmd, err := startInit(cg, &sc.Init, os.Stdout, os.Stderr)
	if err != nil {
		fail(err)
	}
	if err := cg.setPidsLimit(sc.PidsLimit); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		fail(fmt.Errorf("exec: %w", err))
	}
	ticks, _ := processStartTicks(cmd.Process.Pid)
	answer(shimReply{PID: cmd.Process.Pid, StartTicks: ticks})
	go func() {
		for s := range sigs {
			// SIGCHLD is the init's own ending, SIGURG the Go runtime's preemption.
			if s == syscall.SIGCHLD || s == syscall.SIGURG {
				continue
			}
			_ = cmd.Process.Signal(s)
		}
	}()
	res := drivers.WaitResult(cmd.Wait())
	// A task that survived the OOM kill of one of its processes and exited 0 succeeded.
	if !res.Successful() && cg.oomKills() > 0 {
		res.OOMKilled = true
	}
	// The task's PID namespace died with its init; destroy kills what is left of the cgroup
	// (commands of an alloc exec) and waits for it to be empty.
	_ = cg.destroy()
	drivers.WriteExitFile(sc.ExitFile, res)
	switch {
	case res.Signal != 0:
		os.Exit(128 + res.Signal)
	case res.Err != nil:
		os.Exit(127)
	}
	os.Exit(res.ExitCode)
}
