package nomad

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// testClusterKey is the cluster key of in-process test clusters (32 bytes, base64).
const testClusterKey = "5NEn9gQSVj1t0aRft5oiXlqXUMOLtueEDpybZxbiFt4="

// testCluster starts n servers that find each other through retry_join and bootstrap with
// bootstrap_expect = n.
func testCluster(t *testing.T, n int, cbs ...func(*Config)) []*Server {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = freeAddr(t)
	}
	servers := make([]*Server, n)
	for i := range servers {
		cfg := DefaultConfig()
		cfg.FastRaft = true
		cfg.NodeName = fmt.Sprintf("server-%d", i)
		cfg.RaftBindAddr = addrs[i]
		cfg.BootstrapExpect = n
		cfg.RetryJoin = addrs
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

func leaderOf(servers []*Server) *Server {
	for _, s := range servers {
		if s.IsLeader() {
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
	cfg.BootstrapExpect = 0 // join only
	cfg.RetryJoin = []string{servers[0].RaftAddr()}
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
