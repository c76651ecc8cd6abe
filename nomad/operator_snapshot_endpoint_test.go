package nomad

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestOperatorSnapshot_ThroughFollowers: a save sent to a follower is forwarded to the leader,
// and a restore sent to a follower of another cluster replaces every server's state there.
func TestOperatorSnapshot_ThroughFollowers(t *testing.T) {
	a := testCluster(t, 3)
	for _, s := range a {
		waitFor(t, 10*time.Second, func() bool {
			peers, err := s.Peers()
			return err == nil && len(peers) == 3
		})
	}
	var reg structs.JobRegisterResponse
	must.NoError(t, followerOf(a).Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.Job(),
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reg))

	var saved structs.SnapshotSaveResponse
	must.NoError(t, followerOf(a).Endpoints.Operator.SnapshotSave(&structs.SnapshotSaveRequest{}, &saved))
	must.SliceNotEmpty(t, saved.Archive)
	must.Positive(t, saved.Index)

	b := testCluster(t, 3)
	for _, s := range b {
		waitFor(t, 10*time.Second, func() bool {
			peers, err := s.Peers()
			return err == nil && len(peers) == 3
		})
	}
	var restored structs.GenericResponse
	must.NoError(t, followerOf(b).Endpoints.Operator.SnapshotRestore(
		&structs.SnapshotRestoreRequest{Archive: saved.Archive}, &restored))
	for _, s := range b {
		waitFor(t, 10*time.Second, func() bool {
			job, err := s.State().JobByID(nil, "default", "web")
			return err == nil && job != nil
		})
	}

	// A refused archive changes nothing and says why.
	var bad structs.GenericResponse
	err := followerOf(b).Endpoints.Operator.SnapshotRestore(&structs.SnapshotRestoreRequest{Archive: []byte("junk")}, &bad)
	must.Eq(t, 400, structs.ErrorCode(err))
	must.StrContains(t, err.Error(), "not gzip data")
}

// After a restore the leader tracks the restored nodes' heartbeats (a node that never comes
// back is marked down) and schedules the restored pending evaluations.
func TestOperatorSnapshot_RestoreRearmsTheLeader(t *testing.T) {
	a := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	registerNode(t, a, mock.Node("n1"), "")
	var reg structs.JobRegisterResponse
	must.NoError(t, a.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.Job(),
		WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reg))
	var saved structs.SnapshotSaveResponse
	must.NoError(t, a.Endpoints.Operator.SnapshotSave(&structs.SnapshotSaveRequest{}, &saved))

	b := testServer(t, func(c *Config) { c.NumSchedulers = 1 })
	var restored structs.GenericResponse
	must.NoError(t, b.Endpoints.Operator.SnapshotRestore(&structs.SnapshotRestoreRequest{Archive: saved.Archive}, &restored))
	b.heartbeats.mu.Lock()
	_, tracked := b.heartbeats.deadlines["n1"]
	b.heartbeats.mu.Unlock()
	must.True(t, tracked, must.Sprint("the restored node's heartbeat is tracked"))
	waitFor(t, 10*time.Second, func() bool {
		e, err := b.State().EvalByID(nil, reg.EvalID)
		return err == nil && e != nil && e.Status != structs.EvalStatusPending
	})
}
