package execdriver

import (
	"fmt"
	"sort"
	"strings"
)

// capNumbers are Linux's capabilities by the names jobs and the agent's configuration use
// (lower case, without CAP_). The numbers are the kernel's ABI; they are written out rather
// than taken from x/sys/unix so that the configuration is checked on every platform.
var capNumbers = map[string]int{
	"chown": 0, "dac_override": 1, "dac_read_search": 2, "fowner": 3, "fsetid": 4, "kill": 5,
	"setgid": 6, "setuid": 7, "setpcap": 8, "linux_immutable": 9, "net_bind_service": 10,
	"net_broadcast": 11, "net_admin": 12, "net_raw": 13, "ipc_lock": 14, "ipc_owner": 15,
	"sys_module": 16, "sys_rawio": 17, "sys_chroot": 18, "sys_ptrace": 19, "sys_pacct": 20,
	"sys_admin": 21, "sys_boot": 22, "sys_nice": 23, "sys_resource": 24, "sys_time": 25,
	"sys_tty_config": 26, "mknod": 27, "lease": 28, "audit_write": 29, "audit_control": 30,
	"setfcap": 31, "mac_override": 32, "mac_admin": 33, "syslog": 34, "wake_alarm": 35,
	"block_suspend": 36, "audit_read": 37, "perfmon": 38, "bpf": 39, "checkpoint_restore": 40,
}

// capAll stands for every capability in allow_caps, cap_add and cap_drop, as upstream.
const capAll = "all"

// DefaultCaps are the capabilities a task run as root keeps unless its job or the agent's
// allow_caps says otherwise: upstream's default for this driver, Docker's default set without
// net_raw. Enough to own files and switch users; not to mount, load modules, trace or kill
// processes outside the task's namespace, change the network, the clock or raw devices.
var DefaultCaps = []string{
	"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
	"net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot",
}

// capSet is a set of capability names, normalised.
type capSet map[string]bool

// parseCaps normalises names ("CAP_NET_RAW", "net_raw") and refuses unknown ones, naming
// where they came from. "all" is kept as is; the caller decides what it means there.
func parseCaps(where string, names []string) (capSet, error) {
	out := capSet{}
	for _, n := range names {
		c := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(n)), "cap_")
		if _, ok := capNumbers[c]; !ok && c != capAll {
			return nil, fmt.Errorf("%s: unknown capability %q", where, n)
		}
		out[c] = true
	}
	return out, nil
}

func (s capSet) sorted() []string {
	out := make([]string, 0, len(s))
	for c := range s {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// numbers are the set's capabilities as the kernel numbers them, ascending.
func (s capSet) numbers() []int {
	out := make([]int, 0, len(s))
	for c := range s {
		if n, ok := capNumbers[c]; ok {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// taskCaps computes the capabilities a root task keeps: the defaults the agent allows, less
// cap_drop ("all" drops every default), plus cap_add. A task may add only what allow_caps
// allows ("all" there allows everything); anything else refuses the task, naming the
// capability, instead of running it with less than it asked for.
func taskCaps(allow capSet, add, drop []string) (capSet, error) {
	adds, err := parseCaps("cap_add", add)
	if err != nil {
		return nil, err
	}
	drops, err := parseCaps("cap_drop", drop)
	if err != nil {
		return nil, err
	}
	allowed := func(c string) bool { return allow[capAll] || allow[c] }
	out := capSet{}
	if !drops[capAll] {
		for _, c := range DefaultCaps {
			if allowed(c) && !drops[c] {
				out[c] = true
			}
		}
	}
	if adds[capAll] {
		if !allow[capAll] {
			// Every capability allow_caps names, and no more.
			for c := range allow {
				out[c] = true
			}
			return out, nil
		}
		for c := range capNumbers {
			out[c] = true
		}
		return out, nil
	}
	for _, c := range adds.sorted() {
		if !allowed(c) {
			return nil, fmt.Errorf("cap_add: capability %q is not allowed by the exec driver's allow_caps (%s)",
				c, strings.Join(allow.sorted(), ", "))
		}
		out[c] = true
	}
	return out, nil
}
