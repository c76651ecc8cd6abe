//go:build amd64 || arm64

package execdriver

import "golang.org/x/sys/unix"

// seccompCommonRules are the rules of both architectures (their numbers differ; the names
// are the same).
var seccompCommonRules = []seccompRule{
	// The kernel's keyring is not namespaced: a task would read or plant other workloads'
	// keys.
	{unix.SYS_KEYCTL, capNone}, {unix.SYS_ADD_KEY, capNone}, {unix.SYS_REQUEST_KEY, capNone},
	{unix.SYS_USERFAULTFD, capNumbers["sys_ptrace"]},
	{unix.SYS_IO_URING_SETUP, capNone}, {unix.SYS_IO_URING_ENTER, capNone}, {unix.SYS_IO_URING_REGISTER, capNone},
	{unix.SYS_BPF, capNumbers["sys_admin"]}, {unix.SYS_PERF_EVENT_OPEN, capNumbers["perfmon"]},
	{unix.SYS_INIT_MODULE, capNumbers["sys_module"]}, {unix.SYS_FINIT_MODULE, capNumbers["sys_module"]},
	{unix.SYS_DELETE_MODULE, capNumbers["sys_module"]},
	{unix.SYS_KEXEC_LOAD, capNumbers["sys_boot"]}, {unix.SYS_KEXEC_FILE_LOAD, capNumbers["sys_boot"]},
	{unix.SYS_REBOOT, capNumbers["sys_boot"]},
	{unix.SYS_SETTIMEOFDAY, capNumbers["sys_time"]}, {unix.SYS_CLOCK_SETTIME, capNumbers["sys_time"]},
	{unix.SYS_CLOCK_ADJTIME, capNumbers["sys_time"]},
	{unix.SYS_ACCT, capNumbers["sys_pacct"]}, {unix.SYS_SYSLOG, capNumbers["syslog"]},
	{unix.SYS_SWAPON, capNumbers["sys_admin"]}, {unix.SYS_SWAPOFF, capNumbers["sys_admin"]},
	{unix.SYS_QUOTACTL, capNumbers["sys_admin"]}, {unix.SYS_LOOKUP_DCOOKIE, capNumbers["sys_admin"]},
	{unix.SYS_OPEN_BY_HANDLE_AT, capNumbers["dac_read_search"]},
	{unix.SYS_MOUNT, capNumbers["sys_admin"]}, {unix.SYS_PIVOT_ROOT, capNumbers["sys_admin"]},
	{unix.SYS_MOVE_MOUNT, capNumbers["sys_admin"]}, {unix.SYS_OPEN_TREE, capNumbers["sys_admin"]},
	{unix.SYS_FSOPEN, capNumbers["sys_admin"]}, {unix.SYS_FSCONFIG, capNumbers["sys_admin"]},
	{unix.SYS_FSMOUNT, capNumbers["sys_admin"]}, {unix.SYS_FSPICK, capNumbers["sys_admin"]},
	{unix.SYS_MOUNT_SETATTR, capNumbers["sys_admin"]}, {unix.SYS_SETNS, capNumbers["sys_admin"]},
}
