package drivers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A raw_exec task runs under a shim: the agent's own binary, started with shimEnv naming an
// exit file, which starts the task as its child, waits for it and writes how it ended to the
// exit file. The shim outlives the agent with the task, so that a restarted agent learns a
// re-attached task's exit code (it is not the parent of either) from the file, even for a
// task that ended while no agent ran. The shim leads the task's process group; it takes no
// part in signals: a kill reaches the whole group, a signal is sent to the task itself, and
// whatever reaches the shim is caught and dropped, so that it stays to record the exit.

// shimEnv carries the exit file's path to the shim, argv0Env the command as the job gave it
// (the task's argv[0]); the task sees neither.
const (
	shimEnv  = "NOMADFORK_RAW_EXEC_EXIT_FILE"
	argv0Env = "NOMADFORK_RAW_EXEC_ARGV0"
	// userEnv carries "uid:gid" of the task's `user`: the shim stays the agent's user (it
	// writes the exit file beside the task) and starts the task as that user.
	userEnv = "NOMADFORK_RAW_EXEC_USER"
	// netNSEnv names the allocation's network namespace (bridge mode), which the shim joins
	// before it starts the task.
	netNSEnv = "NOMADFORK_RAW_EXEC_NETNS"
)

// ShimName is the shim's argv[0]: what the process list shows, and how resource usage
// tells the shim from the task's own processes.
const ShimName = "nomad-raw-exec-shim"

// exitFileName is the shim's exit file, in the task's directory.
const exitFileName = ".nomad-exit"

// Any binary that links the drivers (the agent, and test binaries, which start themselves
// as the shim the same way) becomes the shim when started with shimEnv.
func init() {
	if path, ok := os.LookupEnv(shimEnv); ok {
		os.Exit(runShim(path, os.Args[1:]))
	}
}

// shimExit is what the exit file holds.
type shimExit struct {
	ExitCode  int
	Signal    int
	Err       string `json:",omitempty"`
	OOMKilled bool   `json:",omitempty"`
}

func (e *shimExit) result() *ExitResult {
	res := &ExitResult{ExitCode: e.ExitCode, Signal: e.Signal, OOMKilled: e.OOMKilled}
	if e.Err != "" {
		res.Err = errors.New(e.Err)
	}
	return res
}

// runShim runs argv as its child until it ends, records how in exitFile, and exits with the
// child's code (128 plus the signal for a signalled child, as shells do).
func runShim(exitFile string, argv []string) int {
	argv0 := os.Getenv(argv0Env)
	asUser := os.Getenv(userEnv)
	netNS := os.Getenv(netNSEnv)
	_ = os.Unsetenv(netNSEnv)
	_ = os.Unsetenv(shimEnv)
	_ = os.Unsetenv(argv0Env)
	_ = os.Unsetenv(userEnv)
	// Caught, not ignored: a caught signal's handler does not survive the child's exec, an
	// ignored one would.
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs)
	go func() {
		for range sigs {
		}
	}()
	if len(argv) == 0 {
		writeExit(exitFile, &shimExit{ExitCode: 127, Err: "raw_exec: no command"})
		return 127
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if argv0 != "" {
		cmd.Args[0] = argv0
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if asUser != "" {
		cred, err := parseCredential(asUser)
		if err != nil {
			writeExit(exitFile, &shimExit{ExitCode: 127, Err: "raw_exec: user: " + err.Error()})
			return 127
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if netNS != "" {
		// The task is forked from this goroutine's thread, now in the namespace.
		if err := JoinNetNS(netNS); err != nil {
			writeExit(exitFile, &shimExit{ExitCode: 127, Err: "raw_exec: " + err.Error()})
			return 127
		}
	}
	if err := cmd.Start(); err != nil {
		writeExit(exitFile, &shimExit{ExitCode: 127, Err: "raw_exec: starting " + strconv.Quote(argv[0]) + ": " + err.Error()})
		return 127
	}
	// The task's PID is named in a file: the shim may have other children for a moment (Go's
	// runtime probes clone with a child of its own before the first start), so "the shim's
	// child" alone could name one that is not the task.
	writeFileWhole(exitFile+taskPIDSuffix, []byte(strconv.Itoa(cmd.Process.Pid)))
	res := WaitResult(cmd.Wait())
	e := &shimExit{ExitCode: res.ExitCode, Signal: res.Signal}
	if res.Err != nil {
		e.ExitCode, e.Err = 127, res.Err.Error()
	}
	writeExit(exitFile, e)
	if e.Signal != 0 {
		return 128 + e.Signal
	}
	return e.ExitCode
}

// taskPIDSuffix names, after the exit file's path, the file where the shim records its task's PID.
const taskPIDSuffix = ".pid"

// writeExit writes the exit file whole or not at all.
func writeExit(path string, e *shimExit) {
	raw, err := json.Marshal(e)
	if err != nil {
		return
	}
	writeFileWhole(path, raw)
}

// writeFileWhole writes a file whole or not at all (a temporary file renamed over it).
func writeFileWhole(path string, raw []byte) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return
	}
	_ = os.Rename(tmp, path)
}

// readExit reads an exit file; false when there is none (the shim was killed, or has not
// written it yet).
func readExit(path string) (*ExitResult, bool) {
	if path == "" {
		return nil, false
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var e shimExit
	if json.Unmarshal(raw, &e) != nil {
		return nil, false
	}
	return e.result(), true
}

// shimCommand builds the command that runs argv under the shim; the caller adds shimEnv.
// /proc/self/exe is the running binary even when its file was replaced or removed since (an
// upgrade in place); the shim's argv[0] names it for whoever reads the process list.
func shimCommand(argv []string) (*exec.Cmd, error) {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe", argv...)
	cmd.Args[0] = ShimName
	return cmd, nil
}

// taskChild is the task process under the shim shimPID, as the shim recorded it beside
// exitFile; 0 when the shim has not started it yet or it has ended. The recorded PID counts
// only while it is still the shim's live child, so a number the kernel gave to another
// process since is never signalled.
func taskChild(shimPID int, exitFile string) int {
	raw, err := os.ReadFile(exitFile + taskPIDSuffix)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 0 {
		return 0
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0
	}
	f := bytes.Fields(stat[end+1:])
	// After the command name: state(3) ppid(4).
	if len(f) < 2 || f[0][0] == 'Z' || f[0][0] == 'X' || string(f[1]) != strconv.Itoa(shimPID) {
		return 0
	}
	return pid
}

// WriteExitFile records how a task ended, for a shim of another driver (exec) that outlives
// the agent as raw_exec's does: written whole or not at all.
func WriteExitFile(path string, res *ExitResult) {
	e := &shimExit{ExitCode: res.ExitCode, Signal: res.Signal, OOMKilled: res.OOMKilled}
	if res.Err != nil {
		e.Err = res.Err.Error()
	}
	writeExit(path, e)
}

// ReadExitFile reads what WriteExitFile wrote; false when there is nothing (yet).
func ReadExitFile(path string) (*ExitResult, bool) { return readExit(path) }

// parseCredential reads "uid:gid"; the task gets no supplementary groups of the agent's.
func parseCredential(s string) (*syscall.Credential, error) {
	u, g, ok := strings.Cut(s, ":")
	uid, err1 := strconv.ParseUint(u, 10, 32)
	gid, err2 := strconv.ParseUint(g, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("bad uid:gid %q", s)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}
