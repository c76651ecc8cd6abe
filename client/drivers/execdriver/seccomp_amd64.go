//go:build linux

package execdriver

import "golang.org/x/sys/unix"

const seccompArch = unix.AUDIT_ARCH_X86_64

// seccompX32Bit marks a call of the x32 ABI, which shares the architecture of amd64.
const seccompX32Bit = 0x40000000

var seccompRules = append(seccompCommonRules,
	seccompRule{unix.SYS_IOPL, capNumbers["sys_rawio"]},
	seccompRule{unix.SYS_IOPERM, capNumbers["sys_rawio"]},
	seccompRule{unix.SYS_UMOUNT2, capNumbers["sys_admin"]},
)
