package execdriver

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A seccomp filter, the last thing the init sets before it executes the command, refuses the
// system calls a container runtime refuses by default: those that reach the whole host (the
// kernel's keyring, modules, kexec, the clock, swap, reboot), that have been the way in of
// many kernel exploits (bpf, perf_event_open, userfaultfd, io_uring), that undo the chroot
// (mount and its new API, setns, open_by_handle_at), and the creation of user namespaces,
// in which a task would hold every capability over namespaces of its own. A call that a
// capability the task was given legitimately needs (sys_admin for mount, sys_time for the
// clock, …) is left to that capability. The filter is the thread's and the command inherits
// it through exec; it cannot be removed, only narrowed.

// seccompRule refuses the system call nr unless the task holds the capability unless
// (-1: always).
type seccompRule struct {
	nr     uint32
	unless int
}

// capNone marks a rule no capability lifts.
const capNone = -1

// cloneNewUser is CLONE_NEWUSER, looked for in the flags of clone and unshare.
const cloneNewUser = unix.CLONE_NEWUSER

// seccompErrno is the filter's answer to a refused call: EPERM, as if the capability were
// missing, which programs already handle.
const seccompErrno = uint32(unix.EPERM)

func bpfStmt(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }

func bpfJump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// Offsets in struct seccomp_data.
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	// The low 32 bits of the first argument, on a little-endian machine (both of ours).
	seccompDataArg0 = 16
)

// seccompProgram builds the filter for a task holding caps. Calls of another architecture
// than the native one (i386 through int 0x80 on amd64, and x32) are refused with ENOSYS:
// their numbers are not the ones the rules name.
func seccompProgram(caps []int) []unix.SockFilter {
	held := map[int]bool{}
	for _, c := range caps {
		held[c] = true
	}
	errno := unix.SECCOMP_RET_ERRNO | seccompErrno
	enosys := unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	p := []unix.SockFilter{
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompDataArch),
		bpfJump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, seccompArch, 1, 0),
		bpfStmt(unix.BPF_RET|unix.BPF_K, enosys),
		bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompDataNr),
	}
	if seccompX32Bit != 0 {
		p = append(p,
			bpfJump(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, seccompX32Bit, 0, 1),
			bpfStmt(unix.BPF_RET|unix.BPF_K, enosys))
	}
	for _, r := range seccompRules {
		if r.unless != capNone && held[r.unless] {
			continue
		}
		p = append(p,
			bpfJump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, r.nr, 0, 1),
			bpfStmt(unix.BPF_RET|unix.BPF_K, errno))
	}
	// clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library
	// fall back to clone, whose flags it can.
	p = append(p,
		bpfJump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_CLONE3, 0, 1),
		bpfStmt(unix.BPF_RET|unix.BPF_K, enosys))
	if !held[capNumbers["sys_admin"]] {
		p = append(p,
			bpfJump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_CLONE, 1, 0),
			bpfJump(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, unix.SYS_UNSHARE, 0, 3),
			bpfStmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, seccompDataArg0),
			bpfJump(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, cloneNewUser, 0, 1),
			bpfStmt(unix.BPF_RET|unix.BPF_K, errno))
	}
	return append(p, bpfStmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW))
}

// installSeccomp sets the filter on this thread. no_new_privs must be set already: the
// kernel takes a filter from a process without CAP_SYS_ADMIN only then. On an architecture
// without rules no filter is set.
func installSeccomp(caps []int) error {
	if seccompArch == 0 {
		return nil
	}
	p := seccompProgram(caps)
	prog := unix.SockFprog{Len: uint16(len(p)), Filter: &p[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("setting the seccomp filter: %w", err)
	}
	return nil
}
