package execdriver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/nomadfork/nomad/client/drivers"
	"golang.org/x/sys/unix"
)

// RunInit is the task's init, run by the agent's binary started with InitCommand. It never
// returns: it becomes the task's command, or exits with why it could not.
func RunInit() {
	// Namespaces and roots changed below belong to this thread; it is never given back.
	runtime.LockOSThread()
	if len(os.Args) > 2 && os.Args[2] == shimArg {
		runShim()
	}
	if raw := os.Getenv(joinConfigEnv); raw != "" {
		// An alloc exec helper: its errors are the session's, on its stderr.
		var c initConfig
		code, err := 0, json.Unmarshal([]byte(raw), &c)
		if err == nil {
			code, err = joinTask(&c)
		}
		if err != nil {
			_, _ = fmt.Fprintf(os.Stderr, "exec: %v\n", err)
			os.Exit(127)
		}
		os.Exit(code)
	}
	errPipe := os.NewFile(initErrorFD, "init-error")
	syscall.CloseOnExec(initErrorFD)
	fail := func(err error) {
		_, _ = fmt.Fprint(errPipe, err.Error())
		os.Exit(127)
	}
	raw, err := readConfigFD(initConfigFD, "init-config")
	if err != nil {
		fail(fmt.Errorf("reading the init's configuration: %w", err))
	}
	var c initConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		fail(fmt.Errorf("decoding the init's configuration: %w", err))
	}
	fail(startTask(&c))
}

// startTask builds the task's chroot in the namespaces the init was cloned into, drops to
// the task's user and executes the command, which becomes PID 1 of the task's PID
// namespace. It returns only on failure.
func startTask(c *initConfig) error {
	// Nothing mounted here may reach the host's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	root := c.Root
	// pivot_root needs the new root to be a mount point.
	if err := unix.Mount(root, root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding the chroot %s: %w", root, err)
	}
	if err := unix.Mount("", root, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("restricting the chroot %s: %w", root, err)
	}
	old := unix.Umask(0)
	for _, b := range c.Binds {
		if err := bind(root, b); err != nil {
			return err
		}
	}
	if err := mountProcAndDev(root); err != nil {
		return err
	}
	unix.Umask(old)
	if c.Hostname != "" {
		if err := unix.Sethostname([]byte(c.Hostname)); err != nil {
			return fmt.Errorf("setting the hostname: %w", err)
		}
	}
	if err := enterRoot(root); err != nil {
		return err
	}
	// Inside the new root, so that a link among the paths masked resolves in the chroot and
	// never on the host; and while CAP_SYS_ADMIN is still held, which limitCapabilities
	// drops: from then on nothing here can be unmounted or remounted by the task.
	if err := hardenMounts(); err != nil {
		return err
	}
	if err := limitCapabilities(c.Caps); err != nil {
		return err
	}
	if err := noNewPrivileges(); err != nil {
		return err
	}
	if len(c.Ambient) > 0 {
		// Kept across the change of user below, so that the ambient set can be raised.
		if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("keeping capabilities: %w", err)
		}
	}
	if err := dropPrivileges(c.UID, c.GID); err != nil {
		return err
	}
	if err := raiseAmbient(c.Ambient); err != nil {
		return err
	}
	dir := c.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("entering the working directory %s: %w", dir, err)
	}
	path, err := lookPath(c.Command, c.Env)
	if err != nil {
		return err
	}
	// Last: from here on the init makes no call but execve.
	if err := installSeccomp(c.Caps); err != nil {
		return err
	}
	argv := append([]string{c.Command}, c.Args...)
	err = syscall.Exec(path, argv, c.Env)
	return fmt.Errorf("starting %q: %w", c.Command, err)
}

// bind mounts b.Source at b.Target in the chroot, creating the mount point as a directory
// or an empty file as the source is one. The target may not lead through a link: the
// chroot's directories are the agent's, and a link there would mount over a host path.
func bind(root string, b bindMount) error {
	st, err := os.Stat(b.Source)
	if err != nil {
		return fmt.Errorf("chroot source %s: %w", b.Source, err)
	}
	target := filepath.Join(root, b.Target)
	if st.IsDir() {
		err = os.MkdirAll(target, 0o755)
	} else {
		if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
			var f *os.File
			if f, err = os.OpenFile(target, os.O_CREATE|os.O_RDONLY|unix.O_NOFOLLOW, 0o644); err == nil {
				_ = f.Close()
			}
		}
	}
	if err != nil {
		return fmt.Errorf("creating mount point %s: %w", target, err)
	}
	if resolved, err := filepath.EvalSymlinks(target); err != nil || resolved != target {
		return fmt.Errorf("mount point %s leads through a link", b.Target)
	}
	if err := unix.Mount(b.Source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("mounting %s at %s: %w", b.Source, b.Target, err)
	}
	// No set-user-ID program or device node of a mount gives a task more than its user has:
	// a setuid-root binary of the host's /usr would make it root in its namespaces.
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_NOSUID | unix.MS_NODEV)
	if b.ReadOnly {
		flags |= unix.MS_RDONLY
	}
	if err := unix.Mount("", target, "", flags, ""); err != nil {
		return fmt.Errorf("restricting %s: %w", b.Target, err)
	}
	return nil
}

// devices are the nodes of the task's /dev: the harmless ones every program expects.
var devices = []struct {
	name         string
	major, minor uint32
}{
	{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0},
}

// mountProcAndDev gives the chroot a /proc of the task's PID namespace, a read-only /sys and
// a minimal /dev of its own (a tmpfs with the usual nodes, a private devpts and a /dev/shm).
func mountProcAndDev(root string) error {
	proc := filepath.Join(root, "proc")
	if err := os.MkdirAll(proc, 0o555); err != nil {
		return fmt.Errorf("creating /proc: %w", err)
	}
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	// A read-only /sys, which runtimes read for the machine's CPUs and memory; the cgroup
	// tree is not mounted in it.
	sys := filepath.Join(root, "sys")
	if err := os.MkdirAll(sys, 0o555); err != nil {
		return fmt.Errorf("creating /sys: %w", err)
	}
	if err := unix.Mount("sysfs", sys, "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /sys: %w", err)
	}
	dev := filepath.Join(root, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return fmt.Errorf("creating /dev: %w", err)
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_STRICTATIME, "mode=755,size=65536k"); err != nil {
		return fmt.Errorf("mounting /dev: %w", err)
	}
	for _, n := range devices {
		if err := unix.Mknod(filepath.Join(dev, n.name), unix.S_IFCHR|0o666, int(unix.Mkdev(n.major, n.minor))); err != nil {
			return fmt.Errorf("creating /dev/%s: %w", n.name, err)
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return fmt.Errorf("creating /dev/%s: %w", d, err)
		}
	}
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mounting /dev/pts: %w", err)
	}
	if err := unix.Mount("shm", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777"); err != nil {
		return fmt.Errorf("mounting /dev/shm: %w", err)
	}
	for link, to := range map[string]string{
		"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(to, filepath.Join(dev, link)); err != nil {
			return fmt.Errorf("creating /dev/%s: %w", link, err)
		}
	}
	return nil
}

// enterRoot makes root the process's root with pivot_root, so the host's tree is not even
// reachable from the task's mount namespace; where pivot_root is refused (a host whose own
// root is not a mount point, such as an initramfs), it falls back to chroot.
func enterRoot(root string) error {
	if err := unix.Chdir(root); err != nil {
		return fmt.Errorf("entering the chroot: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err == nil {
		// The old root is stacked under the new one: detach it.
		if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
			return fmt.Errorf("detaching the host's root: %w", err)
		}
	} else if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("entering the chroot: %w", err)
	}
	return unix.Chdir("/")
}

// limitCapabilities drops every capability but keep from the bounding set, which caps what
// the command gets when it is executed, even as root. The bounding set is a thread's: this
// is the thread that executes the command (or forks the command of an alloc exec).
func limitCapabilities(keep []int) error {
	kept := map[int]bool{}
	for _, c := range keep {
		kept[c] = true
	}
	last := unix.CAP_LAST_CAP
	if raw, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if kept[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	return nil
}

// noNewPrivileges sets no_new_privs on this thread, which the command (or the child it
// forks) inherits: no set-user-ID program or file capability can give it more than it was
// started with, whatever the mounts it reaches.
func noNewPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	return nil
}

// dropPrivileges makes every thread of the process the task's user, with no supplementary
// groups but its own. A user other than root keeps no capabilities.
func dropPrivileges(uid, gid int) error {
	// syscall's, not unix's: these change every thread of the process.
	if err := syscall.Setgroups([]int{gid}); err != nil {
		return fmt.Errorf("setting groups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("setting gid %d: %w", gid, err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("setting uid %d: %w", uid, err)
	}
	return nil
}

// raiseAmbient gives a task run as another user than root the capabilities its cap_add
// names: they are made the thread's permitted, inheritable and effective set and raised as
// ambient, which the kernel hands on through exec to a program without file capabilities.
// Only this thread is changed: it is the one that executes the command.
func raiseAmbient(caps []int) error {
	if len(caps) == 0 {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	for _, c := range caps {
		data[c/32].Permitted |= 1 << (uint(c) % 32)
	}
	for i := range data {
		data[i].Inheritable, data[i].Effective = data[i].Permitted, data[i].Permitted
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("setting the task's capabilities: %w", err)
	}
	for _, c := range caps {
		if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, uintptr(c), 0, 0); err != nil {
			return fmt.Errorf("raising ambient capability %d: %w", c, err)
		}
	}
	return nil
}

// lookPath resolves a command as a shell would, with the task's PATH and inside the chroot;
// a bare name not on the PATH is also looked for in /local, where artifacts land.
func lookPath(command string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		return command, nil
	}
	pathVar := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range append(filepath.SplitList(pathVar), "/local") {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, command)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("starting %q: %w", command, exec.ErrNotFound)
}

// joinTask runs the command in the running task: it joins the task's cgroups, then its IPC,
// UTS, network, PID and mount namespaces and its root, and starts the command there as a child (a
// process enters a PID namespace only at its birth). It returns the command's exit code,
// 128 plus the signal that killed it as shells do.
func joinTask(c *initConfig) (int, error) {
	for _, f := range c.Cgroups {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			return 0, fmt.Errorf("joining the task's cgroup: %w", err)
		}
	}
	// Every handle is opened before any namespace changes what /proc is.
	proc := "/proc/" + strconv.Itoa(c.TaskPID)
	rootFD, err := unix.Open(proc+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("opening the task's root: %w", err)
	}
	type ns struct {
		name string
		kind int
		fd   int
	}
	// The network namespace too: the allocation's own in bridge mode (the host's otherwise,
	// which joining changes nothing).
	spaces := []*ns{{"ipc", unix.CLONE_NEWIPC, -1}, {"uts", unix.CLONE_NEWUTS, -1}, {"net", unix.CLONE_NEWNET, -1}, {"pid", unix.CLONE_NEWPID, -1}, {"mnt", unix.CLONE_NEWNS, -1}}
	for _, s := range spaces {
		if s.fd, err = unix.Open(proc+"/ns/"+s.name, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			return 0, fmt.Errorf("opening the task's %s namespace: %w", s.name, err)
		}
	}
	if ticks, err := processStartTicks(c.TaskPID); err != nil || ticks != c.TaskStartTicks {
		return 0, errors.New("the task is no longer running")
	}
	// A thread may change its mount namespace and root only with a filesystem view of its
	// own; the Go runtime's threads share one.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return 0, fmt.Errorf("unsharing the filesystem view: %w", err)
	}
	for _, s := range spaces {
		if err := unix.Setns(s.fd, s.kind); err != nil {
			return 0, fmt.Errorf("joining the task's %s namespace: %w", s.name, err)
		}
		_ = unix.Close(s.fd)
	}
	if err := unix.Fchdir(rootFD); err != nil {
		return 0, fmt.Errorf("entering the task's root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return 0, fmt.Errorf("entering the task's root: %w", err)
	}
	_ = unix.Close(rootFD)
	dir := c.Dir
	if dir == "" {
		dir = "/"
	}
	if err := unix.Chdir(dir); err != nil {
		return 0, fmt.Errorf("entering the working directory %s: %w", dir, err)
	}
	path, err := lookPath(c.Command, c.Env)
	if err != nil {
		return 0, err
	}
	// The child is forked from this thread and inherits its bounding set and no_new_privs.
	if err := limitCapabilities(c.Caps); err != nil {
		return 0, err
	}
	if err := noNewPrivileges(); err != nil {
		return 0, err
	}
	// The helper's own calls on this thread after it (fork, wait) are none the filter refuses.
	if err := installSeccomp(c.Caps); err != nil {
		return 0, err
	}
	cmd := &exec.Cmd{
		Path: path, Args: append([]string{c.Command}, c.Args...), Env: c.Env, Dir: dir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{
			Credential:  &syscall.Credential{Uid: uint32(c.UID), Gid: uint32(c.GID), Groups: []uint32{uint32(c.GID)}},
			AmbientCaps: ambientCaps(c.Ambient),
		},
	}
	tty := handOverTerminal(cmd.SysProcAttr)
	// Signals the helper gets are the command's: a terminal's ^C reaches both through the
	// process group, a kill from the agent only the helper.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %q: %w", c.Command, err)
	}
	go func() {
		for s := range sigs {
			if tty && s == syscall.SIGTERM {
				// The agent ends a terminal session: the command's group and the terminal's
				// foreground job go, which no kill of the helper's own group reaches.
				if fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil && fg > 1 {
					_ = syscall.Kill(-fg, syscall.SIGKILL)
				}
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				continue
			}
			_ = cmd.Process.Signal(s)
		}
	}()
	return drivers.ExitCode(cmd.Wait())
}

// handOverTerminal makes the command the terminal's foreground process group, when the
// helper's session has a terminal, and reports whether it did. The helper leads a session
// of the host's PID namespace, whose process group the command, in the task's namespace,
// cannot see; a shell with job control that reads the foreground group at start and
// restores it at exit would fail there ("Cannot set tty process group") and exit 2 whatever
// its own code. In a group of its own (in the task's namespace) made the foreground one, it
// sees its own group instead. Being out of the helper's group, it is not reached by a kill
// of that group: the agent ends such a session with SIGTERM to the helper, which kills the
// command's group and the terminal's foreground job.
func handOverTerminal(attr *syscall.SysProcAttr) bool {
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err != nil {
		return false
	}
	attr.Setpgid, attr.Foreground, attr.Ctty = true, true, 0
	return true
}

func ambientCaps(caps []int) []uintptr {
	var out []uintptr
	for _, c := range caps {
		out = append(out, uintptr(c))
	}
	return out
}
