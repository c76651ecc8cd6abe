//go:build unix

package agent

import (
	"syscall"
	"testing"

	"github.com/shoenig/test/must"
)

func TestSecurity_AgentRaisesTheOpenFileLimit(t *testing.T) {
	var orig syscall.Rlimit
	must.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig))
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	if orig.Max < 2048 {
		t.Skipf("hard limit %d leaves no room to lower the soft one", orig.Max)
	}
	low := syscall.Rlimit{Cur: orig.Max / 2, Max: orig.Max}
	must.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))

	before, after, err := raiseFileLimit()
	must.NoError(t, err)
	must.Eq(t, low.Cur, before)
	must.Eq(t, orig.Max, after)
	var now syscall.Rlimit
	must.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now))
	must.Eq(t, orig.Max, now.Cur)
}
