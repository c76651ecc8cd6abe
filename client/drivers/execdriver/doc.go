// Package execdriver is the `exec` task driver: a task's command runs as a process of the
// host, isolated. It is detected only on Linux with the agent running as root and cgroups
// (v1 or v2) usable, and then each task gets:
//
//   - its own mount, PID, IPC and UTS namespaces; the command is PID 1 of its PID namespace,
//     and the hostname is the first eight characters of its allocation ID;
//   - a chroot that is its task directory, with the host paths of `chroot_env` (upstream's
//     default list when unset) bind-mounted read-only, the allocation directory at /alloc,
//     its own /local, /secrets and /tmp, a /proc of its PID namespace, a read-only /sys and
//     a minimal /dev;
//     the chroot is entered with pivot_root (chroot where the host refuses it);
//   - the kernel's knobs under /proc (/proc/sys above all) read-only, the paths a container
//     runtime masks (/proc/kcore, /proc/keys, /sys/firmware, …) and the host's secrets
//     (/etc/shadow, SSH host keys, …) masked, /dev read-only (harden_linux.go);
//   - its `user` (nobody by default; the client refuses root unless user.denylist allows
//     it), with no capabilities left but what its cap_add names (as ambient ones); as root, only upstream's default set for this driver
//     as allow_caps, cap_add and cap_drop change it (caps.go; never CAP_SYS_ADMIN unless
//     allowed: no mounts, no undoing the masks), no_new_privs in every case and a seccomp
//     filter that refuses what reaches the whole host (seccomp_linux.go);
//   - a cgroup with its memory (memory_max as the hard limit when set, memory then being
//     the soft limit / memory.low), CPU shares and pids, removed when the task ends; an OOM
//     kill is read from the cgroup and reported in the task's exit.
//
// Why not runc's libcontainer: it needs its own init re-executed from main as well, and for
// joining a running task (alloc exec) a cgo constructor that runs before the Go runtime
// starts; it brings a large dependency tree whose API changes between releases, for the
// handful of system calls used here. Instead the agent's binary is started again with the
// hidden first argument `executor-init` (RunInit), in namespaces the kernel creates at clone
// (syscall.SysProcAttr.Cloneflags). That init waits until the agent placed it in the task's
// cgroup and sent its configuration over a pipe, builds the chroot, drops privileges and
// executes the command; a second pipe, closed on exec, tells the agent the command runs or
// why it did not. For alloc exec the same binary joins the task: it moves itself into the
// task's cgroup, then on a thread with a filesystem view of its own (unshare CLONE_FS, which
// Go's shared-view threads otherwise forbid) it setns into the task's IPC, UTS, PID and mount
// namespaces, chroots into /proc/<pid>/root and starts the command as a child, the only way
// into a PID namespace.
//
// A task runs under a shim (shim_linux.go): the same binary started with `executor-init shim`
// in a session of its own, outside the task's namespaces and cgroup, which starts the init as
// its child, puts it in the task's cgroup, waits for it and records how it ended (an OOM kill
// included) in an exit file outside the chroot, then removes the cgroup. The shim outlives a
// killed agent; a restarted one re-attaches (Recover) by the shim's PID and start time, and
// finds the task's process (for alloc exec) and cgroup from the handle state the client
// stored.
//
// It imports client/drivers and client/allocdir of ours.
package execdriver
