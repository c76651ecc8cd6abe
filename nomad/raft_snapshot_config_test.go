package nomad

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestRaft_SnapshotSettings: raft_snapshot_threshold and raft_snapshot_interval reach Raft.
// With the defaults (8192 entries, checked every 2 minutes) the 40 writes here never make a
// snapshot; with a threshold of 16 checked every 50 ms one appears within seconds.
func TestRaft_SnapshotSettings(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) {
		c.DataDir = dir
		c.RaftSnapshotThreshold = 16
		c.RaftSnapshotInterval = 50 * time.Millisecond
		c.RaftTrailingLogs = 8
	})
	for i := range 40 {
		_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID(fmt.Sprintf("job-%d", i))})
		must.NoError(t, err)
	}
	snapDir := filepath.Join(raftutil.RaftDir(dir), "snapshots")
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		entries, err := os.ReadDir(snapDir)
		return err == nil && len(entries) > 0
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)),
		must.Sprint("no snapshot was taken: the threshold and interval did not reach Raft"))
}
