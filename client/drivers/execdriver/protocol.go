package execdriver

import (
	"io"
	"os"
)

// InitCommand is the hidden first argument with which the agent starts its own binary as a
// task's init (or as the helper of an alloc exec). main calls RunInit when it sees it, before
// anything else; a test binary of a package that starts exec tasks does the same in TestMain.
const InitCommand = "executor-init"

// IsInit reports whether this process was started as a task's init.
func IsInit() bool { return len(os.Args) > 1 && os.Args[1] == InitCommand }

// The init's file descriptors, after stdin, stdout and stderr.
const (
	// initConfigFD carries the JSON initConfig. The agent writes it only once the init is in
	// the task's cgroup, so reading it to EOF is also the init's signal to go on.
	initConfigFD = 3
	// initErrorFD is closed on exec: the agent reads EOF when the command started, or the
	// reason it did not.
	initErrorFD = 4
)

// readConfigFD reads an inherited descriptor to EOF and closes it through the one *os.File
// that owns it. Closing the number any other way leaves that File's finalizer to close it a
// second time, at the next GC, when the number may already be a pipe or mount this process
// opened since: the shim lost its init's configuration pipe that way ("broken pipe").
func readConfigFD(fd uintptr, name string) ([]byte, error) {
	f := os.NewFile(fd, name)
	raw, err := io.ReadAll(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return raw, err
}

// joinConfigEnv carries the JSON initConfig of an alloc exec helper, which needs no
// handshake: it joins the task's cgroup itself before it runs anything of the caller's.
const joinConfigEnv = "NOMAD_EXECUTOR_JOIN"

// initConfig is what the agent tells the init to do.
type initConfig struct {
	// Join makes the init an alloc exec helper: it joins the running task TaskPID (its
	// cgroups, namespaces and root) and runs the command as a child. Otherwise it sets up a
	// new task in the namespaces it was started in and becomes the command.
	Join    bool
	TaskPID int
	// TaskStartTicks is the task's start time: the helper checks that TaskPID is still
	// the task once it holds its namespaces, in case the PID was reused.
	TaskStartTicks uint64
	Cgroups        []string `json:",omitempty"`

	// Root is the host path of the task's chroot (its task directory) and Binds what is
	// mounted in it; Hostname is the task's in its UTS namespace.
	Root     string
	Binds    []bindMount `json:",omitempty"`
	Hostname string

	Command string
	Args    []string
	Env     []string
	UID     int
	GID     int
	// Caps are the capabilities (kernel numbers) left in the bounding set: all a root task
	// can ever hold.
	Caps []int `json:",omitempty"`
	// Ambient are the capabilities a task run as another user than root is given (its
	// cap_add): none unless it asks.
	Ambient []int `json:",omitempty"`
	// Dir is the command's working directory inside the chroot.
	Dir string
}

// bindMount mounts the host path Source at Target, a path inside the chroot.
type bindMount struct {
	Source   string
	Target   string
	ReadOnly bool
}

// ShimName is the argv[0] of a task's shim, which the process list shows.
const ShimName = "nomad-exec-shim"

// shimArg, after InitCommand, starts the binary as a task's shim instead of its init.
const shimArg = "shim"

// shimConfig is what the agent tells a task's shim, over initConfigFD. The shim starts the
// init with Init, puts it in the cgroup of Cgroups (CgroupMode names the hierarchy), waits
// for it and records how it ended in ExitFile.
type shimConfig struct {
	Init       initConfig
	CgroupMode cgroupMode
	Cgroups    []string
	ExitFile   string
	// PidsLimit is set on the cgroup once the command runs: the init before it is a Go
	// program whose threads count against the limit.
	PidsLimit int `json:",omitempty"`
	// NetNS is the allocation's network namespace (bridge mode), which the shim joins before
	// it starts the init; "" leaves the task in the host's network.
	NetNS string `json:",omitempty"`
}

// shimReply is the shim's answer over initErrorFD once the command runs (the init's PID and
// start time) or could not be started (Error).
type shimReply struct {
	PID        int    `json:",omitempty"`
	StartTicks uint64 `json:",omitempty"`
	Error      string `json:",omitempty"`
}
