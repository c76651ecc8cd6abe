//go:build linux

package execdriver

import "golang.org/x/sys/unix"

const seccompArch = unix.AUDIT_ARCH_AARCH64

// seccompX32Bit is zero: arm64 has no second ABI under the same architecture.
const seccompX32Bit = 0

var seccompRules = append(seccompCommonRules,
	seccompRule{unix.SYS_UMOUNT2, capNumbers["sys_admin"]},
)
