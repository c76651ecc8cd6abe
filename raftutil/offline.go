package raftutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// ErrDataDirInUse means an agent (or another tool) holds the WAL metadata DB's lock.
var ErrDataDirInUse = errors.New("the data dir is in use by a running agent")

// Offline is a stopped server's log, opened for inspection and repair. Unlike raft-wal's own
// Open it keeps going past a segment it cannot open, so what is intact can still be read.
type Offline struct {
	DataDir string
	WALDir  string
	// Damages are the file-level findings (missing, short or damaged segment files).
	Damages []*Damage
	// Snapshots are the snapshots on disk, newest first.
	Snapshots []raft.SnapshotMeta
	// Applied is the server's record of the last index it applied (0 when unknown).
	Applied uint64

	meta  *metadb.BoltMetaDB
	segs  []types.SegmentInfo
	open  []openSegment
	codec wal.BinaryCodec
}

type openSegment struct {
	info  types.SegmentInfo
	file  string
	r     types.SegmentReader
	first uint64
	last  uint64 // 0 when the segment holds no readable entry
	err   error
}

// OpenOffline opens dataDir's log. The metadata DB is a bolt file the running agent holds a
// lock on, and bolt waits for that lock forever: after lockTimeout the call gives up with
// ErrDataDirInUse. (The waiting goroutine stays until the process exits; the CLI exits next.)
func OpenOffline(dataDir string, lockTimeout time.Duration) (*Offline, error) {
	walDir := WALDir(dataDir)
	if _, err := os.Stat(filepath.Join(walDir, metadb.FileName)); err != nil {
		return nil, fmt.Errorf("no server raft log in %s: %w", dataDir, err)
	}
	meta := &metadb.BoltMetaDB{}
	type loaded struct {
		st  types.PersistentState
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		st, err := meta.Load(walDir)
		done <- loaded{st, err}
	}()
	var st types.PersistentState
	select {
	case l := <-done:
		if l.err != nil {
			return nil, fmt.Errorf("opening %s: %w", filepath.Join(walDir, metadb.FileName), l.err)
		}
		st = l.st
	case <-time.After(lockTimeout):
		return nil, fmt.Errorf("%w: %s stayed locked for %s; stop the agent first", ErrDataDirInUse, filepath.Join(walDir, metadb.FileName), lockTimeout)
	}
	o := &Offline{DataDir: dataDir, WALDir: walDir, meta: meta, segs: st.Segments}
	applied, appliedErr := ReadApplied(AppliedFile(dataDir))
	if appliedErr != nil {
		o.Damages = append(o.Damages, &Damage{File: AppliedFile(dataDir), Reason: appliedErr.Error() +
			"; if the log is otherwise intact, remove the file (the server then starts without comparing its log against it)"})
	}
	o.Applied = applied
	o.Damages = append(o.Damages, segmentDamages(walDir, st.Segments, applied)...)
	filer := segment.NewFiler(walDir, fs.New())
	for i, info := range st.Segments {
		s := openSegment{info: info, file: segmentPath(walDir, info), first: info.MinIndex}
		// A sealed segment without an index block (see CheckSegmentFiles) is read the way
		// the tail is, by walking its frames; MaxIndex still bounds it.
		if (info.SealTime.IsZero() && i == len(st.Segments)-1) || info.IndexStart == 0 {
			// Read-only use of the tail writer: nothing is appended, so nothing is written.
			w, err := filer.RecoverTail(info)
			if err == nil {
				s.r, s.last = w, w.LastIndex()
				if !info.SealTime.IsZero() && info.MaxIndex < s.last {
					s.last = info.MaxIndex
				}
			}
			s.err = err
		} else {
			r, err := filer.Open(info)
			s.r, s.last, s.err = r, info.MaxIndex, err
		}
		o.open = append(o.open, s)
	}
	snaps, err := listSnapshots(RaftDir(dataDir))
	if err != nil {
		o.Close()
		return nil, err
	}
	o.Snapshots = snaps
	var snapIndex uint64
	if len(snaps) > 0 {
		snapIndex = snaps[0].Index
	}
	_, last := o.Range()
	var d *Damage
	if errors.As(CheckApplied(walDir, st.Segments, last, snapIndex, applied, AppliedFile(dataDir)), &d) {
		o.Damages = append(o.Damages, d)
	}
	return o, nil
}

// segmentDamages is every file-level finding, one per segment at most.
func segmentDamages(walDir string, segs []types.SegmentInfo, applied uint64) []*Damage {
	var out []*Damage
	for i := range segs {
		// CheckSegmentFiles treats the last segment as the tail only in its own position.
		if err := CheckSegmentFiles(walDir, segs[:i+1], applied); err != nil {
			var d *Damage
			if errors.As(err, &d) && d.File == segmentPath(walDir, segs[i]) {
				_ = withLostRange(d, walDir, segs, applied, "the applied-index record")
				out = append(out, d)
			}
		}
	}
	return out
}

// Close releases the readers and the metadata DB's lock.
func (o *Offline) Close() {
	for _, s := range o.open {
		if s.r != nil {
			_ = s.r.Close()
		}
	}
	o.open = nil
	if o.meta != nil {
		_ = o.meta.Close()
		o.meta = nil
	}
}

// Range is the first and last index the log holds (0, 0 when empty).
func (o *Offline) Range() (first, last uint64) {
	for _, s := range o.open {
		if s.last == 0 || s.last < s.first {
			continue
		}
		if first == 0 {
			first = s.first
		}
		last = s.last
	}
	// A sealed segment that failed to open still has its range in the metadata.
	return first, last
}

// GetLog reads one entry; it implements logReader.
func (o *Offline) GetLog(index uint64, l *raft.Log) error {
	for _, s := range o.open {
		if index < s.first || index > s.last {
			continue
		}
		if s.err != nil {
			return fmt.Errorf("segment %s cannot be opened: %w", filepath.Base(s.file), s.err)
		}
		buf, err := s.r.GetLog(index)
		if err != nil {
			return err
		}
		defer buf.Close()
		return o.codec.Decode(buf.Bs, l)
	}
	return fmt.Errorf("index %d is in no segment", index)
}

// File names the segment file index lives in.
func (o *Offline) File(index uint64) string { return fileFor(o.WALDir, o.segs, index) }

// Walk checks every entry in order and calls fn with each result.
func (o *Offline) Walk(fn func(Status) error) error {
	first, last := o.Range()
	var prevTerm uint64
	for i := first; first > 0 && i <= last; i++ {
		st := checkEntry(o, i, prevTerm)
		if st.Err == nil {
			prevTerm = st.Term
		}
		if err := fn(st); err != nil {
			return err
		}
	}
	return nil
}

// CheckEntry checks one entry as the server's verification does.
func (o *Offline) CheckEntry(index uint64) Status {
	var prevTerm uint64
	if index > 1 {
		var prev raft.Log
		if o.GetLog(index-1, &prev) == nil {
			prevTerm = prev.Term
		}
	}
	return checkEntry(o, index, prevTerm)
}

func listSnapshots(raftDir string) ([]raft.SnapshotMeta, error) {
	dirs, err := os.ReadDir(filepath.Join(raftDir, "snapshots"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []raft.SnapshotMeta
	for _, d := range dirs {
		if !d.IsDir() || strings.HasSuffix(d.Name(), ".tmp") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(raftDir, "snapshots", d.Name(), "meta.json"))
		if err != nil {
			continue // raft skips a snapshot without meta too
		}
		var m raft.SnapshotMeta
		if json.Unmarshal(raw, &m) == nil {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index > out[j].Index })
	return out, nil
}
