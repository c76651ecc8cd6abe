//go:build unix

package agent

import (
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// lowFileLimit is the open-file limit under which the agent warns at start: each HTTP and RPC
// connection, each allocation's log and each Raft segment holds a descriptor, and the
// per-address caps (limits.*_max_conns_per_client) bound one address, not the sum of them.
const lowFileLimit = 65536

// raiseFileLimit lifts the soft limit on open files to the hard limit, which an unprivileged
// process may do. Go's runtime does the same at start on most systems; doing it here keeps it
// true wherever the runtime does not, and reports the limit the agent runs with.
func raiseFileLimit() (before, after uint64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, err
	}
	before = rl.Cur
	if rl.Cur >= rl.Max {
		return before, before, nil
	}
	rl.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return before, before, err
	}
	return before, rl.Max, nil
}

// logFileLimit raises the limit and says what it is, warning when it is low.
func logFileLimit(logger hclog.Logger) {
	before, after, err := raiseFileLimit()
	switch {
	case err != nil:
		logger.Warn("could not raise the open-file limit", "soft_limit", before, "error", err)
	case after < lowFileLimit:
		logger.Warn("the open-file limit is low for an agent that serves many connections: raise the hard limit (systemd LimitNOFILE, ulimit -Hn)",
			"limit", after, "suggested", lowFileLimit)
	default:
		logger.Debug("open-file limit", "before", before, "limit", after)
	}
}
