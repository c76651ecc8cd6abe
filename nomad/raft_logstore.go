package nomad

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/types"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
)

// openDiskRaft opens what Raft keeps under data_dir, checked before Raft reads any of it: the
// snapshot store, the applied-index record and the log store (s.logStore, with the disk
// guard s.disk). It returns the snapshot store and the FSM Raft must drive.
func (s *Server) openDiskRaft() (raft.SnapshotStore, raft.FSM, error) {
	dir := raftutil.RaftDir(s.config.DataDir)
	walDir := raftutil.WALDir(s.config.DataDir)
	if err := os.MkdirAll(walDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("creating raft dir: %w", err)
	}
	// Snapshot files carry raft's CRC-64 of their state, which raft's file snapshot store
	// verifies when it opens one; checking the newest here names the file when it fails.
	fss, err := newSnapshotStore(dir, 2, s.logger.Named("snapshots"))
	if err != nil {
		return nil, nil, fmt.Errorf("opening snapshot store: %w", err)
	}
	if err := raftutil.CheckNewestSnapshot(fss.FileSnapshotStore, dir); err != nil {
		return nil, nil, refuseDamagedLog(s.config.DataDir, err)
	}
	metas, err := fss.List()
	if err != nil {
		return nil, nil, fmt.Errorf("listing snapshots: %w", err)
	}
	// Every entry is read and decoded once before Raft starts, so damage is one clear
	// refusal here rather than a panic in the FSM seconds after an election, or entries
	// raft-wal drops without a word. The WAL does not close its metadata DB on Close,
	// and that DB holds a file lock: keep our own handle so Shutdown can release it (a
	// server restarted in the same process on the same data dir would otherwise wait
	// for the lock forever).
	progress := raftutil.Progress{AppliedPath: raftutil.AppliedFile(s.config.DataDir)}
	if len(metas) > 0 {
		progress.SnapshotIndex = metas[0].Index
	}
	record, err := raftutil.OpenAppliedRecord(progress.AppliedPath)
	if err != nil {
		return nil, nil, refuseDamagedLog(s.config.DataDir, &raftutil.Damage{File: progress.AppliedPath, Reason: err.Error() +
			"; if the log is otherwise intact, remove the file (the server then starts without comparing its log against it)"})
	}
	progress.Applied = record.Index()
	w, meta, err := raftutil.OpenVerified(walDir, s.logger.Named("wal"), progress, s.config.RaftSegmentSize)
	if err != nil {
		_ = record.Close()
		// A disk still full (raft-wal could not allocate its tail segment again) is not
		// damage: pointing the operator at the log-repair steps would send them the wrong way.
		if errors.Is(err, syscall.ENOSPC) {
			return nil, nil, fmt.Errorf("refusing to start: the data_dir filesystem at %s is full (%w); the log is intact: free space on that disk and start the server again", walDir, err)
		}
		return nil, nil, refuseDamagedLog(s.config.DataDir, err)
	}
	segmentSize := s.config.RaftSegmentSize
	if segmentSize == 0 {
		segmentSize = wal.DefaultSegmentSize
	}
	// Measured where the log lives: an operator may mount the raft directory on a disk of its
	// own, and that is the one whose space decides whether a write can be stored.
	s.disk = newDiskGuard(walDir, segmentSize, s.logger.Named("disk"))
	s.logStore = &diskLogStore{dir: walDir, segmentSize: segmentSize, meta: meta, record: record,
		guard: s.disk, logger: s.logger.Named("wal"), w: w}
	s.applied = record
	return fss, &appliedFSM{FSM: s.fsm, record: record}, nil
}

// diskLogStore is the Raft log and stable store on disk: raft-wal, guarded against a full
// disk and reopened after a failed append.
//
// raft-wal does not survive a failed write in place: a segment rotation that cannot allocate
// the next file leaves its tail sealed in memory (every later append fails with "segment is
// sealed"), and a failed append leaves its unwritten frames in its buffer. The files on disk
// are still right, so the store rebuilds raft-wal from them before the next append. The
// metadata DB stays open across reopens (each WAL gets it as raftutil.KeptOpen: its file
// lock would make a second open wait forever).
//
// Lock order: mu, then raft-wal's own locks. Reads and appends share mu; only a reopen takes
// it exclusively, so a read never sees a closed WAL.
type diskLogStore struct {
	dir         string
	segmentSize int
	meta        *metadb.BoltMetaDB
	record      *raftutil.AppliedRecord
	guard       *diskGuard
	logger      hclog.Logger

	mu sync.RWMutex
	w  *wal.WAL
	// broken is the append error that left w unfit for appends, nil when it is fit.
	broken error
}

var (
	_ raft.LogStore          = (*diskLogStore)(nil)
	_ raft.StableStore       = (*diskLogStore)(nil)
	_ raft.MonotonicLogStore = (*diskLogStore)(nil)
)

func (d *diskLogStore) FirstIndex() (uint64, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.w.FirstIndex()
}

func (d *diskLogStore) LastIndex() (uint64, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.w.LastIndex()
}

func (d *diskLogStore) GetLog(index uint64, l *raft.Log) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.w.GetLog(index, l)
}

func (d *diskLogStore) StoreLog(l *raft.Log) error { return d.StoreLogs([]*raft.Log{l}) }

// StoreLogs refuses before raft-wal is touched when the disk cannot hold the next segment,
// and reopens raft-wal first when an earlier append failed. Either refusal is a
// structs.ErrDiskFull naming the path when the disk is the cause.
func (d *diskLogStore) StoreLogs(logs []*raft.Log) error {
	if err := d.guard.checkLog(); err != nil {
		return err
	}
	if err := d.reopenIfBroken(); err != nil {
		return err
	}
	d.mu.RLock()
	err := d.w.StoreLogs(logs)
	d.mu.RUnlock()
	if err == nil {
		return nil
	}
	d.mu.Lock()
	d.broken = err
	d.mu.Unlock()
	d.logger.Error("raft log append failed; the log store reopens before the next append", "path", d.dir, "error", err)
	return d.diskError(err)
}

// diskError is err as a disk-full refusal when the disk is why it failed: ENOSPC itself, or
// raft-wal's sealed segment after a rotation that could not allocate the next one (raft-wal
// logs the ENOSPC and returns only the seal).
func (d *diskLogStore) diskError(err error) error {
	logFloor, _ := d.guard.floors()
	sp, serr := d.guard.Space()
	full := serr == nil && (sp.FreeBytes < logFloor || (errors.Is(err, types.ErrSealed) && sp.FreeBytes < uint64(d.segmentSize)))
	if errors.Is(err, syscall.ENOSPC) || full {
		return fmt.Errorf("%w (raft-wal: %v)", structs.DiskFull(d.dir, sp.FreeBytes, max(logFloor, uint64(d.segmentSize))), err)
	}
	return err
}

func (d *diskLogStore) reopenIfBroken() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broken == nil {
		return nil
	}
	persisted, err := d.meta.Load(d.dir)
	if err != nil {
		return fmt.Errorf("reopening the raft log in %s: %w", d.dir, err)
	}
	// The file a failed rotation created is empty and past everything applied: raft-wal
	// creates it again, allocated this time.
	if empty := raftutil.UnallocatedTail(d.dir, persisted.Segments, d.record.Index()); empty != "" {
		if err := os.Remove(empty); err != nil {
			return d.diskError(fmt.Errorf("removing the unallocated log segment %s: %w", empty, err))
		}
	}
	// The new WAL opens beside the old one, which keeps serving reads if this fails.
	nw, err := wal.Open(d.dir, wal.WithMetaStore(raftutil.KeptOpen{BoltMetaDB: d.meta}), wal.WithSegmentSize(d.segmentSize), wal.WithLogger(d.logger))
	if err != nil {
		return d.diskError(fmt.Errorf("reopening the raft log in %s: %w", d.dir, err))
	}
	_ = d.w.Close()
	d.logger.Info("raft log store reopened after a failed append; appends continue", "path", d.dir, "failed_with", d.broken)
	d.w, d.broken = nw, nil
	return nil
}

func (d *diskLogStore) DeleteRange(lo, hi uint64) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.w.DeleteRange(lo, hi)
}

func (d *diskLogStore) IsMonotonic() bool { return true }

func (d *diskLogStore) Set(k, v []byte) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.w.Set(k, v)
}

func (d *diskLogStore) Get(k []byte) ([]byte, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.w.Get(k)
}

func (d *diskLogStore) SetUint64(k []byte, v uint64) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.w.SetUint64(k, v)
}

func (d *diskLogStore) GetUint64(k []byte) (uint64, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.w.GetUint64(k)
}

// Close closes raft-wal and its metadata DB (which raft-wal leaves open).
func (d *diskLogStore) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w != nil {
		_ = d.w.Close()
		_ = d.meta.Close()
		d.w = nil
	}
}
