package nomad

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"
	"golang.org/x/sys/unix"

	"github.com/nomadfork/nomad/structs"
)

const (
	// diskLogMargin is room kept beyond one log segment for raft-wal's metadata DB and the
	// stable store (term and vote) to grow.
	diskLogMargin = 4 << 20
	// diskWriteMargin is how much more than the log store's own floor a write needs before
	// the leader takes it: client writes are refused first, so the log store itself never
	// runs out in the middle of a segment rotation (which would leave raft-wal unable to
	// append until it is reopened) and Raft's own entries (elections, membership) still fit.
	diskWriteMargin = 16 << 20
	// DiskWarnFreeBytes and DiskWarnFreeRatio are where /v1/agent/health and the operator
	// output start warning: below 256 MiB or 5% free, whichever is larger.
	DiskWarnFreeBytes = 256 << 20
	DiskWarnFreeRatio = 0.05
	// diskRefusalLogEvery rate-limits the error line a refused write logs.
	diskRefusalLogEvery = 10 * time.Second
	diskMetricsInterval = 10 * time.Second
)

// DiskSpace is the filesystem holding a server's data_dir.
type DiskSpace struct {
	Path       string
	FreeBytes  uint64
	TotalBytes uint64
}

// Warning is a sentence for operators when free space is low, "" otherwise.
func (d DiskSpace) Warning() string {
	limit := max(uint64(DiskWarnFreeBytes), uint64(float64(d.TotalBytes)*DiskWarnFreeRatio))
	if d.FreeBytes >= limit {
		return ""
	}
	return fmt.Sprintf("data_dir %s has %d bytes free of %d (below %d): the server refuses writes when it cannot store the next log segment", d.Path, d.FreeBytes, d.TotalBytes, limit)
}

// diskGuard measures the free space under data_dir and refuses what cannot be made durable.
// A statfs per write batch costs far less than the fsync that follows it, so the space is
// measured each time rather than cached: a disk that fills between two samples must still
// be caught before raft-wal allocates its next segment, and a disk freed again must be seen
// at once.
type diskGuard struct {
	path   string
	logger hclog.Logger

	// mu guards the rest. logFloor is the free space below which the log store refuses to
	// append: one segment (what a rotation allocates) plus a margin; writeFloor is the
	// leader's, above it. Tests lower both to drive raft-wal into a full disk.
	mu                   sync.Mutex
	logFloor, writeFloor uint64
	lastLog              time.Time
	refusals             int
}

func newDiskGuard(path string, segmentSize int, logger hclog.Logger) *diskGuard {
	logFloor := uint64(segmentSize) + diskLogMargin
	return &diskGuard{path: path, logger: logger, logFloor: logFloor, writeFloor: logFloor + diskWriteMargin}
}

func statfsSpace(path string) (DiskSpace, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return DiskSpace{Path: path}, err
	}
	// Bavail, not Bfree: blocks reserved for root are not ours to count on.
	return DiskSpace{Path: path, FreeBytes: st.Bavail * uint64(st.Bsize), TotalBytes: st.Blocks * uint64(st.Bsize)}, nil
}

// Space measures the filesystem now.
func (g *diskGuard) Space() (DiskSpace, error) { return statfsSpace(g.path) }

// checkWrite is the leader's check before it proposes a write; checkLog the log store's
// before it appends. Both answer structs.DiskFull below their floor. A failing statfs
// refuses nothing: the write itself then reports what the disk says.
func (g *diskGuard) checkWrite() error { return g.check(false, "write") }
func (g *diskGuard) checkLog() error   { return g.check(true, "log append") }

// floors returns the log store's and the leader's floors.
func (g *diskGuard) floors() (log, write uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.logFloor, g.writeFloor
}

func (g *diskGuard) check(log bool, what string) error {
	logFloor, floor := g.floors()
	if log {
		floor = logFloor
	}
	sp, err := g.Space()
	if err != nil || sp.FreeBytes >= floor {
		return nil
	}
	err = structs.DiskFull(g.path, sp.FreeBytes, floor)
	g.logRefusal(what, err)
	return err
}

// logRefusal logs at error level at most once per diskRefusalLogEvery, counting what it
// did not log, so a client retrying in a loop cannot flood the log.
func (g *diskGuard) logRefusal(what string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refusals++
	if time.Since(g.lastLog) < diskRefusalLogEvery {
		return
	}
	g.logger.Error("refusing a "+what+": the data_dir disk is full", "path", g.path, "refused_since_last_line", g.refusals, "error", err)
	g.lastLog, g.refusals = time.Now(), 0
}

// runMetrics publishes nomad.agent.data_dir.free_bytes (and total_bytes) until ctx ends; the
// global metrics configuration adds the "nomad." prefix.
func (g *diskGuard) runMetrics(ctx context.Context) {
	tick := time.NewTicker(diskMetricsInterval)
	defer tick.Stop()
	for {
		if sp, err := g.Space(); err == nil {
			metrics.SetGauge([]string{"agent", "data_dir", "free_bytes"}, float32(sp.FreeBytes))
			metrics.SetGauge([]string{"agent", "data_dir", "total_bytes"}, float32(sp.TotalBytes))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// diskHandOffEvery bounds how often a leader whose disk is full asks Raft to hand over.
const diskHandOffEvery = 30 * time.Second

// handOffLeadershipForDisk asks Raft to hand leadership to another voter when this leader
// refuses writes for lack of space: the other servers can still take them. A server of one
// keeps leading (reads and the cluster's own work go on) and refuses writes until space
// returns. Raft carries the transfer out; nothing here waits for it.
func (s *Server) handOffLeadershipForDisk() {
	if !s.IsLeader() {
		return
	}
	s.diskHandOff.Lock()
	defer s.diskHandOff.Unlock()
	if time.Since(s.diskHandOffAt) < diskHandOffEvery {
		return
	}
	cfg := s.raft.GetConfiguration()
	if cfg.Error() != nil {
		return
	}
	voters := 0
	for _, srv := range cfg.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			voters++
		}
	}
	if voters < 2 {
		return
	}
	s.diskHandOffAt = time.Now()
	s.logger.Warn("handing Raft leadership to another server: this server's data_dir disk is full", "path", s.disk.path)
	_ = s.raft.LeadershipTransfer()
}

// DiskSpace measures the filesystem holding the server's data_dir; ok is false without a data
// dir (everything in memory) or when it cannot be measured.
func (s *Server) DiskSpace() (sp DiskSpace, ok bool) {
	if s.disk == nil {
		return DiskSpace{}, false
	}
	sp, err := s.disk.Space()
	return sp, err == nil
}

// DiskHealth is the data_dir part of this server's health: a warning when free space is low
// (writes still taken), refusing when the server refuses writes for want of space. Both are
// zero without a data dir.
func (s *Server) DiskHealth() (warning string, refusing bool) {
	sp, ok := s.DiskSpace()
	if !ok {
		return "", false
	}
	_, writeFloor := s.disk.floors()
	if sp.FreeBytes < writeFloor {
		return fmt.Sprintf("data_dir %s has %d bytes free, below the %d a write needs: writes are refused until space is freed", sp.Path, sp.FreeBytes, writeFloor), true
	}
	return sp.Warning(), false
}
