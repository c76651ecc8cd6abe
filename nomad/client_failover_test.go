package nomad

import (
	"io"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestClientRPC_Failover: a client connected to a follower registers through it (forwarded to
// the leader); when that server dies the client moves to another one of its list, keeps
// heartbeating, names its node there for streams, and its node stays ready.
func TestClientRPC_Failover(t *testing.T) {
	servers := testCluster(t, 3, func(c *Config) {
		c.MinHeartbeatTTL = 500 * time.Millisecond
		c.HeartbeatGrace = 500 * time.Millisecond
	})
	leader := leaderOf(servers)
	var first *Server
	addrs := []string{}
	for _, s := range servers {
		if s != leader && first == nil {
			first = s
			addrs = append([]string{s.RaftAddr()}, addrs...)
			continue
		}
		addrs = append(addrs, s.RaftAddr())
	}
	rpc, err := client.NewRPCServers(addrs, ClientYamuxConfig(), nil, nil)
	must.NoError(t, err)
	t.Cleanup(rpc.Close)
	c, err := client.New(&client.Config{
		AllocDir: t.TempDir(), Drivers: []drivers.Driver{drivers.Mock{}},
		RetryInterval: 50 * time.Millisecond, MaxQueryTime: 2 * time.Second,
	}, rpc)
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	select {
	case <-c.Registered():
	case <-time.After(15 * time.Second):
		t.Fatal("the client never registered")
	}
	must.Eq(t, first.RaftAddr(), rpc.Current())
	waitFor(t, 10*time.Second, func() bool { return first.clientSessions.get(c.NodeID()) != nil })

	must.NoError(t, first.Shutdown())
	var survivors []*Server
	for _, s := range servers {
		if s != first {
			survivors = append(survivors, s)
		}
	}
	// The client's next call finds the next server of its list.
	waitFor(t, 15*time.Second, func() bool {
		cur := rpc.Current()
		return cur != "" && cur != first.RaftAddr()
	})
	var now *Server
	for _, s := range survivors {
		if s.RaftAddr() == rpc.Current() {
			now = s
		}
	}
	must.NotNil(t, now)
	waitFor(t, 10*time.Second, func() bool { return now.clientSessions.get(c.NodeID()) != nil })

	// Heartbeats reach the leader after the failover: its deadline for the node moves on,
	// several times, and the node is never marked down.
	lead := leaderOf(survivors)
	must.NotNil(t, lead)
	deadline := func() time.Time {
		lead.heartbeats.mu.Lock()
		defer lead.heartbeats.mu.Unlock()
		return lead.heartbeats.deadlines[c.NodeID()]
	}
	for range 3 {
		last := deadline()
		waitFor(t, 10*time.Second, func() bool { return deadline().After(last) })
		for _, s := range survivors {
			node, err := s.State().NodeByID(nil, c.NodeID())
			must.NoError(t, err)
			must.Eq(t, structs.NodeStatusReady, node.Status)
		}
	}

	// A stream to the node from the server that holds its connection, and from the one that
	// does not (relayed), reaches the client.
	go func() {
		for {
			conn, err := rpc.Streams().Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 4)
				if _, err := io.ReadFull(conn, buf); err == nil {
					_, _ = conn.Write([]byte("pong"))
				}
			}()
		}
	}()
	for _, s := range survivors {
		conn, err := s.DialNode(c.NodeID())
		must.NoError(t, err)
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = conn.Write([]byte("ping"))
		must.NoError(t, err)
		buf := make([]byte, 4)
		_, err = io.ReadFull(conn, buf)
		must.NoError(t, err)
		must.Eq(t, "pong", string(buf))
		conn.Close()
	}
	_, err = first.DialNode("no-such-node")
	must.Error(t, err)
}
