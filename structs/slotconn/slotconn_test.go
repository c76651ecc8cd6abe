package slotconn

import (
	"net"
	"testing"

	"github.com/shoenig/test/must"
)

// TestConn_ReleasesOnce: a slot is given back on the first Close only, however often the
// connection is closed (a relay closed by both the HTTP handler and its deferred cleanup).
func TestConn_ReleasesOnce(t *testing.T) {
	a, b := net.Pipe()
	t.Cleanup(func() { _ = b.Close() })
	released := 0
	c := New(a, func() { released++ })
	must.Eq(t, 0, released)
	must.NoError(t, c.Close())
	_ = c.Close()
	must.Eq(t, 1, released)
}
