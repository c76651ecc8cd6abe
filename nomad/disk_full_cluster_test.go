package nomad

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"golang.org/x/sys/unix"
)

// diskCluster starts three servers, each with its data_dir on a tmpfs of its own, and waits
// until every one is a voter (a hand-over needs another voter to take it).
func diskCluster(t *testing.T, size string, cbs ...func(*Config)) ([]*Server, map[*Server]string) {
	t.Helper()
	mnts := make([]string, 3)
	for i := range mnts {
		mnts[i] = mountTmpfs(t, size)
	}
	next := 0
	servers := testCluster(t, 3, func(c *Config) {
		c.DataDir, c.RaftSegmentSize = mnts[next], diskTestSegmentSize
		for _, cb := range cbs {
			cb(c)
		}
		next++
	})
	dirs := map[*Server]string{}
	for i, s := range servers {
		dirs[s] = mnts[i]
	}
	waitFor(t, 20*time.Second, func() bool {
		l := leaderOf(servers)
		if l == nil {
			return false
		}
		f := l.raft.GetConfiguration()
		if f.Error() != nil {
			return false
		}
		voters := 0
		for _, srv := range f.Configuration().Servers {
			if srv.Suffrage == raft.Voter {
				voters++
			}
		}
		return voters == 3
	})
	return servers, dirs
}

// writeToLeader applies a job at whichever server leads now, retrying while leadership moves.
func writeToLeader(t *testing.T, servers []*Server, id string) {
	t.Helper()
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if l := leaderOf(servers); l != nil {
			if err = applyJob(l, id); err == nil {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("write %s not taken by any leader within 20s: %v", id, err)
}

// Jepsen seed 1796529218950934540 (disk-full-leader): a leader whose data_dir filled handed
// leadership over and then wedged. The full leader must step down, follow the new leader
// while its disk stays full (refusing the entries it cannot store), and catch up with no
// restart once space returns; and it must be able to lead again.
func TestDiskFull_FullLeaderHandsOverAndRecovers(t *testing.T) {
	servers, dirs := diskCluster(t, "48m")
	for i := range 5 {
		writeToLeader(t, servers, fmt.Sprintf("before-%d", i))
	}
	for round := range 3 {
		full := leaderOf(servers)
		must.NotNil(t, full)
		// Each round stands for a later fill: the hand-over's rate limit is not what is tested.
		full.diskHandOff.Lock()
		full.diskHandOffAt = time.Time{}
		full.diskHandOff.Unlock()
		filler := fillDisk(t, dirs[full], 0)
		err := applyJob(full, fmt.Sprintf("refused-%d", round))
		must.ErrorIs(t, err, structs.ErrDiskFull)

		// Another server takes over and takes writes while the disk stays full.
		waitFor(t, 20*time.Second, func() bool { l := leaderOf(servers); return l != nil && l != full })
		var ids []string
		for i := range 5 {
			id := fmt.Sprintf("during-%d-%d", round, i)
			writeToLeader(t, servers, id)
			ids = append(ids, id)
		}
		// Held full a while: the full server hears the new leader's terms and entries.
		time.Sleep(3 * time.Second)
		must.NoError(t, os.Remove(filler))
		mustHaveJobs(t, full, ids)
		waitFor(t, 20*time.Second, func() bool {
			return full.raft.State() == raft.Follower && full.Leader() != "" && full.LastContact() < time.Second
		})
		// The recovered server can lead again: hand leadership to it (once a leader is ready:
		// the full server rejoining may have set off an election).
		var l *Server
		waitFor(t, 20*time.Second, func() bool { l = leaderOf(servers); return l != nil })
		must.NoError(t, l.raft.LeadershipTransferToServer(raft.ServerID(full.config.NodeID), raft.ServerAddress(full.config.RaftBindAddr)).Error())
		waitFor(t, 20*time.Second, func() bool { return full.IsLeader() })
		writeToLeader(t, servers, fmt.Sprintf("after-%d", round))
	}
}

// The wedge behind Jepsen seed 1796529218950934540: under a steady stream of writes, a server
// whose disk fills (as leader, then as a follower) refuses the entries sent to it, and with
// Raft's pipelined replication the leader could stop sending it entries for good while its
// heartbeats went on (see unpipelinedTransport). Each time space returns, the server must
// follow a leader again and hold the writes made since; Shutdown at the end must not hang on
// a replication goroutine stuck in a pipeline.
func TestDiskFull_ServerCatchesUpUnderLoad(t *testing.T) {
	servers, dirs := diskCluster(t, "256m", func(c *Config) {
		c.RaftSnapshotThreshold, c.RaftSnapshotInterval, c.RaftTrailingLogs = 128, 500*time.Millisecond, 64
	})
	stop := make(chan struct{})
	done := make(chan struct{})
	// Stopped before the servers shut down (deferred calls run before t.Cleanup's), also
	// when an assertion below fails.
	defer func() {
		close(stop)
		<-done
	}()
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range servers {
				_ = applyJob(s, fmt.Sprintf("load-%d-%s", i%20, s.config.NodeName))
			}
		}
	}()
	for round := range 8 {
		time.Sleep(time.Second)
		full := leaderOf(servers)
		// A full leader first, then a full follower.
		if round%2 == 1 {
			full = followerOf(servers)
		}
		if full == nil {
			continue
		}
		full.diskHandOff.Lock()
		full.diskHandOffAt = time.Time{}
		full.diskHandOff.Unlock()
		filler := fillAll(t, dirs[full])
		time.Sleep(4 * time.Second)
		must.NoError(t, os.Remove(filler))
		waitFor(t, 20*time.Second, func() bool {
			return full.Leader() != "" && (full.IsLeader() || full.LastContact() < time.Second)
		})
		writeToLeader(t, servers, fmt.Sprintf("after-%d", round))
		mustHaveJobs(t, full, []string{fmt.Sprintf("after-%d", round)})
	}
}

// fillAll takes all the space left on dir's filesystem while a server may be writing to it:
// whole first, then 1 MiB at a time until the disk refuses.
func fillAll(t *testing.T, dir string) string {
	t.Helper()
	sp, err := statfsSpace(dir)
	must.NoError(t, err)
	path := dir + "/filler"
	f, err := os.Create(path)
	must.NoError(t, err)
	defer f.Close()
	if unix.Fallocate(int(f.Fd()), 0, 0, int64(sp.FreeBytes)) == nil {
		return path
	}
	for off := int64(0); ; off += 1 << 20 {
		if err := unix.Fallocate(int(f.Fd()), 0, off, 1<<20); err != nil {
			must.ErrorIs(t, err, unix.ENOSPC)
			return path
		}
	}
}
