package execdriver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"syscall"

	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/drivers"
)

// defaultUser is the account tasks run as when they name none, as upstream.
const defaultUser = "nobody"

// defaultPath is the task's PATH when its environment has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Where the allocation's directories are inside the chroot, as upstream.
const (
	chrootAllocDir   = "/alloc"
	chrootLocalDir   = "/local"
	chrootSecretsDir = "/secrets"
)

// selfExe is the agent's own binary, which runs as the task's init. The kernel resolves it
// in the child at exec time, so a binary replaced on disk since the agent started does not
// matter.
const selfExe = "/proc/self/exe"

// Start implements drivers.Driver. The agent's binary is started again as the task's init in
// new mount, PID, IPC and UTS namespaces; it waits until the agent put it in the task's
// cgroup and sent its configuration, builds the chroot, drops to the task's user and
// executes the command. Start returns once the command runs, or with why it could not.
func (d *Driver) Start(cfg *drivers.TaskConfig) (drivers.TaskHandle, error) {
	host, c, sig, ic, err := d.prepare(cfg)
	if err != nil {
		return nil, err
	}
	stdout, stderr, err := drivers.OpenTaskLogs(cfg)
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	closeLogs := func() { _ = stdout.Close(); _ = stderr.Close() }
	cg, err := host.create(cgroupName(cfg.AllocID, cfg.TaskName), cfg.Resources)
	if err != nil {
		closeLogs()
		return nil, fmt.Errorf("exec: %w", err)
	}
	key := taskKey(cfg.AllocID, cfg.TaskName)
	if n := cfg.Resources.Cores; n > 0 {
		cores, err := d.reserveCores(host, key, n)
		if err == nil {
			err = cg.pinCores(host, cgroupName(cfg.AllocID, cfg.TaskName), cores)
		}
		if err != nil {
			d.releaseCores(key)
			_ = cg.destroy()
			closeLogs()
			return nil, fmt.Errorf("exec: %w", err)
		}
	}
	exitFile := exitFilePath(cfg)
	// An exit file of an earlier run of the task must not be taken for this one's.
	if err := os.Remove(exitFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		d.releaseCores(key)
		_ = cg.destroy()
		closeLogs()
		return nil, fmt.Errorf("exec: removing the old exit file: %w", err)
	}
	shim, reply, err := startShim(&shimConfig{Init: *ic, CgroupMode: cg.mode, Cgroups: cg.dirs, ExitFile: exitFile, PidsLimit: c.PidsLimit, NetNS: cfg.NetNS}, stdout, stderr)
	// The shim holds the log files now; the agent needs them no longer.
	closeLogs()
	if err != nil {
		d.releaseCores(key)
		_ = cg.destroy()
		return nil, err
	}
	shimTicks, _ := processStartTicks(shim.Process.Pid)
	h := &Handle{
		shim: shim, shimPID: shim.Process.Pid, shimTicks: shimTicks, exitFile: exitFile,
		cg: cg, logger: d.opts.Logger, killSignal: sig, cfg: ic,
		state:  TaskState{PID: reply.PID, StartTicks: reply.StartTicks, CgroupPath: cg.Path(), Cgroups: append([]string(nil), cg.dirs...)},
		waitCh: make(chan *drivers.ExitResult, 1), done: make(chan struct{}),
	}
	d.track(key, h)
	go h.waitShim(func() { d.untrack(key, h) })
	return h, nil
}

// exitFilePath is where a task's shim records how it ended: in the allocation's directory,
// beside the task's directory and outside its chroot, so the task can neither read nor
// replace it.
func exitFilePath(cfg *drivers.TaskConfig) string {
	return filepath.Join(filepath.Dir(cfg.TaskDir), "."+cfg.TaskName+".exec-exit")
}

// startShim starts a task's shim, sends it its configuration and waits until the command
// runs (the reply names the init) or could not be started.
func startShim(sc *shimConfig, stdout, stderr *os.File) (*exec.Cmd, *shimReply, error) {
	raw, err := json.Marshal(sc)
	if err != nil {
		return nil, nil, err
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("exec: %w", err)
	}
	defer cfgW.Close()
	replyR, replyW, err := os.Pipe()
	if err != nil {
		_ = cfgR.Close()
		return nil, nil, fmt.Errorf("exec: %w", err)
	}
	defer replyR.Close()
	cmd := exec.Command(selfExe, InitCommand, shimArg)
	cmd.Args[0] = ShimName
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{cfgR, replyW}
	// A session of its own: the shim outlives the agent, and nothing sent to the agent's
	// process group or terminal reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	_ = cfgR.Close()
	_ = replyW.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("exec: starting the task's shim: %w", err)
	}
	abort := func(err error) (*exec.Cmd, *shimReply, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, err
	}
	if _, err := cfgW.Write(raw); err != nil {
		return abort(fmt.Errorf("exec: configuring the task's shim: %w", err))
	}
	_ = cfgW.Close()
	msg, err := io.ReadAll(io.LimitReader(replyR, 64<<10))
	if err != nil {
		return abort(fmt.Errorf("exec: reading the task's shim: %w", err))
	}
	var reply shimReply
	if err := json.Unmarshal(msg, &reply); err != nil {
		return abort(fmt.Errorf("exec: the task's shim ended without starting the task (%q)", msg))
	}
	if reply.Error != "" {
		return abort(errors.New(reply.Error))
	}
	return cmd, &reply, nil
}

// startInit starts the init, puts it in the task's cgroup, sends it its configuration and
// waits until it executed the command or failed.
func startInit(cg *taskCgroup, ic *initConfig, stdout, stderr *os.File) (*exec.Cmd, error) {
	raw, err := json.Marshal(ic)
	if err != nil {
		return nil, err
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	defer cfgW.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = cfgR.Close()
		return nil, fmt.Errorf("exec: %w", err)
	}
	defer errR.Close()
	cmd := exec.Command(selfExe, InitCommand)
	// The init's environment is empty; the task's is in its configuration.
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{cfgR, errW}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		// Its own session: nothing the agent's terminal sends reaches the task.
		Setsid: true,
	}
	err = cmd.Start()
	_ = cfgR.Close()
	_ = errW.Close()
	if err != nil {
		return nil, fmt.Errorf("exec: starting the task's init: %w", err)
	}
	abort := func(err error) (*exec.Cmd, error) {
		_ = cmd.Process.Kill()
		// How the init ended says more than the pipe it left: an init that died on its own
		// before reading its configuration wrote why to the task's stderr.
		if werr := cmd.Wait(); werr != nil && !isKilledBy(werr, syscall.SIGKILL) {
			err = fmt.Errorf("%w (the init %v; see the task's stderr)", err, werr)
		}
		return nil, err
	}
	if err := cg.addProc(cmd.Process.Pid); err != nil {
		return abort(fmt.Errorf("exec: %w", err))
	}
	if _, err := cfgW.Write(raw); err != nil {
		return abort(fmt.Errorf("exec: configuring the task's init: %w", err))
	}
	_ = cfgW.Close()
	msg, err := io.ReadAll(io.LimitReader(errR, 64<<10))
	if err != nil {
		return abort(fmt.Errorf("exec: reading the task's init: %w", err))
	}
	if len(msg) > 0 {
		return abort(fmt.Errorf("exec: %s", msg))
	}
	return cmd, nil
}

// prepare reads what Start and Recover both need of a task: the host's cgroups, its driver
// configuration, its kill signal and its init's configuration.
func (d *Driver) prepare(cfg *drivers.TaskConfig) (*cgroupHost, *taskConfig, syscall.Signal, *initConfig, error) {
	host, err := d.host()
	if err != nil {
		return nil, nil, 0, nil, err
	}
	c, err := parseConfig(cfg.Config)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	sig, err := parseSignal(cfg.KillSignal)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	ic, err := d.initConfig(cfg, c)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	return host, c, sig, ic, nil
}

// initConfig builds the init's configuration: the chroot's mounts, the task's user and its
// environment with the allocation's directories where the task sees them.
func (d *Driver) initConfig(cfg *drivers.TaskConfig, c *taskConfig) (*initConfig, error) {
	uid, gid, err := lookupUser(cfg.User)
	if err != nil {
		return nil, err
	}
	allow, err := parseCaps(`plugin "exec": allow_caps`, d.opts.AllowCaps)
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	caps, err := taskCaps(allow, c.CapAdd, c.CapDrop)
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	var ambient capSet
	if uid != 0 {
		// Another user gets what its cap_add names, never the defaults: nobody with
		// dac_override would read every file of the chroot.
		if ambient, err = taskCaps(allow, c.CapAdd, []string{capAll}); err != nil {
			return nil, fmt.Errorf("exec: %w", err)
		}
	}
	// Resolved, so that the init's check that no mount point leads through a link is not
	// fooled by a link above the data directory (such as a /tmp that is one).
	root, err := filepath.EvalSymlinks(cfg.TaskDir)
	if err != nil {
		return nil, fmt.Errorf("exec: task directory: %w", err)
	}
	allocDir, err := filepath.EvalSymlinks(cfg.AllocDir)
	if err != nil {
		return nil, fmt.Errorf("exec: allocation directory: %w", err)
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	if allocDir, err = filepath.Abs(allocDir); err != nil {
		return nil, err
	}
	// The task writes to its own directories and the allocation's shared ones; everything
	// else in the chroot is the host's, read-only.
	for _, p := range []struct {
		root, dir string
		mode      os.FileMode
		own       bool
	}{
		{root, filepath.Join(root, "local"), 0o755, true},
		{root, filepath.Join(root, "secrets"), 0o700, true},
		{root, filepath.Join(root, "tmp"), os.ModeSticky | 0o777, true},
		{allocDir, filepath.Join(allocDir, "data"), 0o777, false},
		{allocDir, filepath.Join(allocDir, "tmp"), os.ModeSticky | 0o777, false},
	} {
		if err := allocdir.MkdirAll(p.root, p.dir, 0o755); err != nil {
			return nil, fmt.Errorf("exec: creating %s: %w", p.dir, err)
		}
		if p.own {
			if err := os.Lchown(p.dir, uid, gid); err != nil {
				return nil, fmt.Errorf("exec: %w", err)
			}
		}
		if err := os.Chmod(p.dir, p.mode); err != nil {
			return nil, fmt.Errorf("exec: %w", err)
		}
	}
	var binds []bindMount
	for src, dst := range d.opts.ChrootEnv {
		if _, err := os.Stat(src); errors.Is(err, os.ErrNotExist) {
			continue
		}
		binds = append(binds, bindMount{Source: src, Target: filepath.Clean(dst), ReadOnly: true})
	}
	// Parents before children, so a nested entry lands on its parent's mount.
	sort.Slice(binds, func(i, j int) bool { return binds[i].Target < binds[j].Target })
	if cfg.ResolvConf != "" {
		// Over the /etc the chroot_env gave. A host whose /etc/resolv.conf is a link (to
		// systemd-resolved's) cannot have a file mounted there without mounting over the
		// host path it leads to: the task keeps the host's, and its events say so.
		if fi, err := os.Lstat("/etc/resolv.conf"); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			cfg.Emit("dns block not applied: the host's /etc/resolv.conf is a link")
		} else {
			binds = append(binds, bindMount{Source: cfg.ResolvConf, Target: "/etc/resolv.conf", ReadOnly: true})
		}
	}
	binds = append(binds, bindMount{Source: allocDir, Target: chrootAllocDir})
	// Host volumes last, parents first, so one may land inside the allocation's directory or
	// inside another volume. bind refuses a mount point reached through a link, which keeps
	// a destination the task could prepare from pointing out of its root.
	vols := make([]bindMount, 0, len(cfg.Mounts))
	for _, m := range cfg.Mounts {
		if !filepath.IsAbs(m.TaskPath) || filepath.Clean(m.TaskPath) != m.TaskPath || m.TaskPath == "/" {
			return nil, fmt.Errorf("exec: volume %q: destination %q is not a clean absolute path below the task's root", m.Volume, m.TaskPath)
		}
		vols = append(vols, bindMount{Source: m.HostPath, Target: m.TaskPath, ReadOnly: m.ReadOnly})
	}
	sort.SliceStable(vols, func(i, j int) bool { return vols[i].Target < vols[j].Target })
	binds = append(binds, vols...)

	env := map[string]string{"PATH": defaultPath}
	for k, v := range cfg.Env {
		env[k] = v
	}
	env["NOMAD_ALLOC_DIR"], env["NOMAD_TASK_DIR"], env["NOMAD_SECRETS_DIR"] = chrootAllocDir, chrootLocalDir, chrootSecretsDir
	keys := slices.Sorted(maps.Keys(env))
	envList := make([]string, 0, len(keys))
	for _, k := range keys {
		envList = append(envList, k+"="+env[k])
	}
	hostname := "nomad-task"
	if len(cfg.AllocID) >= 8 {
		hostname = cfg.AllocID[:8]
	}
	return &initConfig{
		Root: root, Binds: binds, Hostname: hostname,
		Command: c.Command, Args: c.Args, Env: envList, UID: uid, GID: gid, Caps: caps.numbers(), Ambient: ambient.numbers(), Dir: "/",
	}, nil
}

// lookupUser finds the task's account by name or number; "" is nobody.
func lookupUser(name string) (uid, gid int, err error) {
	if name == "" {
		name = defaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		if _, numErr := strconv.Atoi(name); numErr == nil {
			u, err = user.LookupId(name)
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("exec: user %q: %w", name, err)
	}
	if uid, err = strconv.Atoi(u.Uid); err != nil {
		return 0, 0, fmt.Errorf("exec: user %q has uid %q", name, u.Uid)
	}
	if gid, err = strconv.Atoi(u.Gid); err != nil {
		return 0, 0, fmt.Errorf("exec: user %q has gid %q", name, u.Gid)
	}
	return uid, gid, nil
}

// isKilledBy reports whether a process's wait error says it was killed by sig.
func isKilledBy(err error, sig syscall.Signal) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}
