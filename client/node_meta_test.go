package client

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
)

// Dynamic meta reaches the servers in a new registration and survives an agent restart.
func TestClient_NodeMetaRegisteredAndKept(t *testing.T) {
	stateDir := t.TempDir()
	start := func() (*Client, *fakeServers) {
		s := newFakeServers()
		c, err := New(&Config{
			Name: "test", AllocDir: t.TempDir(), StateDir: stateDir, Meta: map[string]string{"static": "s"},
			Drivers: []drivers.Driver{drivers.Mock{}}, MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
		}, s)
		must.NoError(t, err)
		<-c.Registered()
		return c, s
	}
	c, s := start()
	must.Eq(t, "s", c.NodeMeta().Meta["static"])
	must.Eq(t, "info", c.NodeMeta().Meta["connect.log_level"])

	rack := "r1"
	out, err := c.ApplyNodeMeta(map[string]*string{"rack": &rack, "static": nil})
	must.NoError(t, err)
	must.Eq(t, "r1", out.Meta["rack"])
	must.MapNotContainsKey(t, out.Meta, "static")
	waitFor(t, "a registration with the new meta", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		last := s.nodes[len(s.nodes)-1]
		_, hasStatic := last.Meta["static"]
		return last.Meta["rack"] == "r1" && !hasStatic
	})
	c.Shutdown()

	c2, s2 := start()
	t.Cleanup(c2.Shutdown)
	must.Eq(t, "r1", c2.NodeMeta().Meta["rack"])
	must.MapNotContainsKey(t, c2.NodeMeta().Meta, "static")
	s2.mu.Lock()
	must.Eq(t, "r1", s2.nodes[0].Meta["rack"])
	s2.mu.Unlock()

	_, err = c2.ApplyNodeMeta(map[string]*string{})
	must.ErrorContains(t, err, "Meta")
}
