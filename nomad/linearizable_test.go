package nomad

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// A write whose leader lost its leadership after the entry left for the followers may still be
// committed by the next leader: the answer must say so, on this server and across a forward,
// and never read as "No cluster leader" (which says nothing was written).
func TestRaftApplyError_LeadershipLostIsIndeterminate(t *testing.T) {
	for _, lost := range []error{raft.ErrLeadershipLost, raft.ErrRaftShutdown, fmt.Errorf("apply: %w", raft.ErrLeadershipLost)} {
		err := raftApplyError(lost)
		must.True(t, errors.Is(err, structs.ErrWriteOutcomeUnknown), must.Sprintf("%v -> %v", lost, err))
		must.False(t, errors.Is(err, structs.ErrNoLeader))
		must.Eq(t, 500, structs.ErrorCode(err))
		must.StrContains(t, err.Error(), "may still apply it")
		// What a forwarding server rebuilds from the wire keeps the sentinel.
		wire := structs.WireError(structs.ErrorCode(err), structs.ErrorKind(err), err.Error())
		must.True(t, errors.Is(wire, structs.ErrWriteOutcomeUnknown))
	}
	// Refused before the log: nothing was written.
	must.True(t, errors.Is(raftApplyError(raft.ErrNotLeader), structs.ErrNoLeader))
	other := errors.New("boom")
	must.Eq(t, other, raftApplyError(other))
}

// A leader cut off from the others keeps believing it leads until its lease runs out, while
// the others may elect a new leader and acknowledge writes. A default (non-stale) read must
// not be answered from such a leader's state; a stale read may.
func TestCluster_DeposedLeaderRefusesDefaultReads(t *testing.T) {
	// Upstream's timings (a 500ms lease) rather than FastRaft's 100ms: the read below must
	// come while the cut-off leader still believes it leads.
	servers := testCluster(t, 3, func(c *Config) { c.FastRaft = false })
	leader := leaderOf(servers)
	for _, s := range servers {
		waitFor(t, 10*time.Second, func() bool {
			peers, err := s.Peers()
			return err == nil && len(peers) == 3
		})
	}
	// Cut the leader off: its followers' Raft stops answering.
	for _, s := range servers {
		if s != leader {
			must.NoError(t, s.raft.Shutdown().Error())
		}
	}
	var reply structs.JobListResponse
	t0 := time.Now()
	err := leader.Endpoints.Job.List(&structs.JobListRequest{QueryOptions: structs.QueryOptions{Namespace: "default"}}, &reply)
	t.Logf("list: %v after %v", err, time.Since(t0))
	must.Error(t, err, must.Sprint("a leader without a majority answered a default read"))
	must.True(t, errors.Is(err, structs.ErrNotLeader) || errors.Is(err, structs.ErrNoLeader), must.Sprintf("%v", err))

	var stale structs.JobListResponse
	must.NoError(t, leader.Endpoints.Job.List(&structs.JobListRequest{QueryOptions: structs.QueryOptions{
		Namespace: "default", AllowStale: true}}, &stale))
}
