package nomad

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/nomad/gossip"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// testClusterKey is the cluster key of in-process test clusters (32 bytes, base64).
const testClusterKey = "5NEn9gQSVj1t0aRft5oiXlqXUMOLtueEDpybZxbiFt4="

// testCluster starts n servers that find each other through gossip (retry_join names every
// serf address) and bootstrap with bootstrap_expect = n.
func testCluster(t testing.TB, n int, cbs ...func(*Config)) []*Server {
	t.Helper()
	addrs := make([]string, n)
	serfAddrs := make([]string, n)
	for i := range addrs {
		addrs[i] = freeAddr(t)
		serfAddrs[i] = freeAddr(t)
	}
	servers := make([]*Server, n)
	for i := range servers {
		cfg := DefaultConfig()
		cfg.FastRaft = true
		cfg.NodeName = fmt.Sprintf("server-%d", i)
		cfg.RaftBindAddr = addrs[i]
		cfg.SerfBindAddr = serfAddrs[i]
		cfg.BootstrapExpect = n
		cfg.RetryJoin = serfAddrs
		cfg.EncryptKey = testClusterKey
		for _, cb := range cbs {
			cb(cfg)
		}
		srv, err := NewServer(cfg)
		must.NoError(t, err)
		t.Cleanup(func() { _ = srv.Shutdown() })
		servers[i] = srv
	}
	waitFor(t, 15*time.Second, func() bool { return leaderOf(servers) != nil })
	return servers
}

// leaderOf is the leader once it takes calls (it refuses them while it catches up).
func leaderOf(servers []*Server) *Server {
	for _, s := range servers {
		if s.LeaderReady() {
			return s
		}
	}
	return nil
}

func followerOf(servers []*Server) *Server {
	for _, s := range servers {
		if !s.IsLeader() && s.raft.State().String() != "Shutdown" {
			return s
		}
	}
	return nil
}

func TestCluster_FormsReplicatesAndForwardsWrites(t *testing.T) {
	servers := testCluster(t, 3)
	// A majority elects the leader; the third server may bootstrap or hear from it a moment
	// later.
	for _, s := range servers {
		waitFor(t, 10*time.Second, func() bool {
			peers, err := s.Peers()
			return err == nil && len(peers) == 3
		})
	}

	// A write sent to a follower is forwarded to the leader and replicated everywhere.
	follower := followerOf(servers)
	var reply structs.JobRegisterResponse
	must.NoError(t, follower.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.Job(),
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reply))
	must.NotEq(t, "", reply.EvalID)
	for _, s := range servers {
		waitFor(t, 5*time.Second, func() bool {
			job, err := s.State().JobByID(nil, "default", "web")
			return err == nil && job != nil
		})
	}

	// A coded error from the leader keeps its status on the follower.
	var er structs.JobRegisterResponse
	err := follower.Endpoints.Job.Evaluate(&structs.JobEvaluateRequest{JobID: "missing",
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &er)
	must.Eq(t, 404, structs.ErrorCode(err))
	// ... and its sentinel: errors.Is answers on the follower as on the leader.
	must.True(t, errors.Is(err, structs.ErrJobNotFound), must.Sprintf("forwarded error %v", err))

	// Losing the leader elects another; writes through the survivors keep working.
	old := leaderOf(servers)
	must.NoError(t, old.Shutdown())
	var survivors []*Server
	for _, s := range servers {
		if s != old {
			survivors = append(survivors, s)
		}
	}
	waitFor(t, 15*time.Second, func() bool { return leaderOf(survivors) != nil })
	follower = followerOf(survivors)
	var dr structs.JobDeregisterResponse
	must.NoError(t, follower.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web", Purge: true,
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &dr))
	for _, s := range survivors {
		waitFor(t, 5*time.Second, func() bool {
			job, err := s.State().JobByID(nil, "default", "web")
			records, _ := s.State().PurgeRecords(nil)
			return err == nil && job == nil && len(records) == 1
		})
	}
}

func TestCluster_LateServerJoinsExistingCluster(t *testing.T) {
	servers := testCluster(t, 1)
	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.RaftBindAddr = freeAddr(t)
	cfg.NodeName = "late"
	cfg.SerfBindAddr = freeAddr(t)
	cfg.BootstrapExpect = 0 // join only
	cfg.RetryJoin = []string{servers[0].config.SerfBindAddr}
	cfg.EncryptKey = testClusterKey
	late, err := NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = late.Shutdown() })
	waitFor(t, 15*time.Second, func() bool {
		peers, err := servers[0].Peers()
		return err == nil && len(peers) == 2
	})
	var reply structs.JobRegisterResponse
	must.NoError(t, late.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.Job(),
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reply))
	waitFor(t, 5*time.Second, func() bool {
		job, err := late.State().JobByID(nil, "default", "web")
		return err == nil && job != nil
	})
}

func TestCluster_FailedServerIsRemovedFromRaft(t *testing.T) {
	servers := testCluster(t, 3)
	leader := leaderOf(servers)
	waitFor(t, 15*time.Second, func() bool {
		peers, err := leader.Peers()
		return err == nil && len(peers) == 3
	})
	victim := followerOf(servers)
	must.NoError(t, victim.Shutdown())

	// Gossip marks it failed; autopilot's cleanup_dead_servers (on by default) drops it.
	waitFor(t, 30*time.Second, func() bool {
		peers, err := leader.Peers()
		return err == nil && len(peers) == 2
	})
	peers, err := leader.Peers()
	must.NoError(t, err)
	must.SliceNotContains(t, peers, victim.RaftAddr())
	for _, m := range leader.regionServers() {
		if m.ID == victim.config.NodeID {
			must.NotEq(t, "alive", m.Status.String())
		}
	}
}

func TestCluster_ServerThatLeavesIsRemovedFromRaft(t *testing.T) {
	cases := []struct {
		name string
		pick func([]*Server) *Server
	}{
		{name: "follower", pick: followerOf},
		{name: "leader", pick: leaderOf},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			servers := testCluster(t, 3)
			var leaving *Server
			waitFor(t, 15*time.Second, func() bool {
				l := leaderOf(servers)
				if l == nil {
					return false
				}
				peers, err := l.Peers()
				leaving = tc.pick(servers)
				return err == nil && len(peers) == 3 && leaving != nil
			})
			must.NoError(t, leaving.Leave())
			var rest []*Server
			for _, s := range servers {
				if s != leaving {
					rest = append(rest, s)
				}
			}
			// Leave returns once the server is out of Raft; the others have a leader of two.
			// A leader just elected may still be applying the configuration change: wait for it.
			var newLeader *Server
			var peers []string
			waitFor(t, 15*time.Second, func() bool {
				if newLeader = leaderOf(rest); newLeader == nil {
					return false
				}
				p, err := newLeader.Peers()
				peers = p
				return err == nil && len(p) == 2
			})
			must.Len(t, 2, peers)
			must.SliceNotContains(t, peers, leaving.RaftAddr())
			must.False(t, leaving.IsLeader())
		})
	}
}

func TestCluster_GossipTagsDescribeTheServer(t *testing.T) {
	servers := testCluster(t, 1)
	members := servers[0].Serf().Members()
	must.Len(t, 1, members)
	m, ok := gossip.ParseServer(members[0])
	must.True(t, ok)
	must.Eq(t, servers[0].config.NodeID, m.ID)
	must.Eq(t, servers[0].RaftAddr(), m.RPCAddr)
	must.Eq(t, "global", m.Region)
	must.Eq(t, "dc1", m.DC)
	must.Eq(t, 1, m.Expect)
	must.True(t, m.Bootstrap)
	must.Eq(t, "server-0.global", m.Name)
	must.Eq(t, "nomad", members[0].Tags["role"])
	must.Eq(t, "3", members[0].Tags["raft_vsn"])
}

func TestCluster_AnswersAs(t *testing.T) {
	servers := testCluster(t, 2)
	a, b := servers[0], servers[1]
	cases := []struct {
		name string
		id   string
		addr string
		want bool
	}{
		{name: "live server as itself", id: b.config.NodeID, addr: b.RaftAddr(), want: true},
		{name: "live server under another ID", id: "someone-else", addr: b.RaftAddr()},
		{name: "nothing listening", id: b.config.NodeID, addr: freeAddr(t)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, a.answersAs(tc.id, tc.addr))
		})
	}
}

// In a TLS-only cluster gossip is not encrypted, so anyone may claim a server left; the
// leader keeps a server that still answers as itself on its RPC port.
func TestCluster_GossipSayingALiveServerLeftDoesNotRemoveIt(t *testing.T) {
	servers := testCluster(t, 3)
	var leader *Server
	waitFor(t, 15*time.Second, func() bool {
		leader = leaderOf(servers)
		if leader == nil || !leader.leaderCaughtUp() {
			return false
		}
		peers, err := leader.Peers()
		return err == nil && len(peers) == 3
	})
	follower := followerOf(servers)
	var claimed []serf.Member
	for _, m := range leader.Serf().Members() {
		if m.Tags["id"] == follower.config.NodeID {
			m.Status = serf.StatusLeft
			claimed = append(claimed, m)
		}
	}
	must.Len(t, 1, claimed)
	leader.membership.noteGone(claimed)
	leader.membership.reconcile(context.Background())
	peers, err := leader.Peers()
	must.NoError(t, err)
	must.Len(t, 3, peers)
	must.SliceContains(t, peers, follower.RaftAddr())
}

func TestCluster_NewServerVotesOnlyOnceStable(t *testing.T) {
	servers := testCluster(t, 1)
	leader := servers[0]
	conf := structs.DefaultAutopilotConfig()
	conf.ServerStabilizationTime = time.Second
	var reply structs.AutopilotSetConfigResponse
	must.NoError(t, leader.Endpoints.Operator.AutopilotSetConfiguration(&structs.AutopilotSetConfigRequest{Config: *conf}, &reply))
	must.True(t, reply.Updated)

	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.NodeName = "late"
	cfg.RaftBindAddr = freeAddr(t)
	cfg.SerfBindAddr = freeAddr(t)
	cfg.BootstrapExpect = 0
	cfg.RetryJoin = []string{leader.config.SerfBindAddr}
	cfg.EncryptKey = testClusterKey
	late, err := NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = late.Shutdown() })

	suffrage := func() (raft.ServerSuffrage, bool) {
		f := leader.raft.GetConfiguration()
		if f.Error() != nil {
			return 0, false
		}
		for _, s := range f.Configuration().Servers {
			if string(s.ID) == late.config.NodeID {
				return s.Suffrage, true
			}
		}
		return 0, false
	}
	// It joins as a non-voter (seen within a poll of being added, well inside the second it
	// must first be stable for): the one-voter quorum does not grow before it is stable.
	waitFor(t, 15*time.Second, func() bool { _, ok := suffrage(); return ok })
	got, _ := suffrage()
	must.Eq(t, raft.Nonvoter, got)
	waitFor(t, 15*time.Second, func() bool { s, ok := suffrage(); return ok && s == raft.Voter })
}

func TestCluster_TransferLeadership(t *testing.T) {
	servers := testCluster(t, 3)
	for _, s := range servers {
		waitFor(t, 10*time.Second, func() bool {
			peers, err := s.Peers()
			return err == nil && len(peers) == 3
		})
	}
	// Voters become voters only once stable; wait until the target can take over.
	old := leaderOf(servers)
	target := followerOf(servers)
	waitFor(t, 15*time.Second, func() bool {
		f := old.raft.GetConfiguration()
		if f.Error() != nil {
			return false
		}
		for _, srv := range f.Configuration().Servers {
			if srv.ID == raft.ServerID(target.config.NodeID) && srv.Suffrage == raft.Voter {
				return true
			}
		}
		return false
	})

	var reply structs.GenericResponse
	err := target.Endpoints.Operator.RaftTransferLeadership(&structs.RaftPeerRequest{ID: string(raft.ServerID(old.config.NodeID))}, &reply)
	must.Eq(t, 400, structs.ErrorCode(err), must.Sprint("the leader cannot be the target"))
	err = target.Endpoints.Operator.RaftTransferLeadership(&structs.RaftPeerRequest{ID: "nope"}, &reply)
	must.Eq(t, 404, structs.ErrorCode(err))
	err = target.Endpoints.Operator.RaftTransferLeadership(&structs.RaftPeerRequest{}, &reply)
	must.Eq(t, 400, structs.ErrorCode(err))

	// Sent to a follower, forwarded to the leader, which hands over to the named server.
	must.NoError(t, target.Endpoints.Operator.RaftTransferLeadership(&structs.RaftPeerRequest{ID: string(raft.ServerID(target.config.NodeID))}, &reply))
	waitFor(t, 10*time.Second, target.LeaderReady)
	must.False(t, old.IsLeader())
}
