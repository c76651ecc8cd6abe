package raftutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/types"
	"github.com/nomadfork/nomad/structs"
)

// Status is what one entry check found.
type Status struct {
	Index   uint64
	Term    uint64
	LogType raft.LogType
	// MsgType is the message type name for command entries, "" otherwise.
	MsgType string
	Size    int
	// Checksum is the entry's CRC-32C; Legacy marks a command entry written before checksums,
	// in which a flipped byte cannot be detected.
	Checksum uint32
	Legacy   bool
	// Err is why the entry cannot be applied; nil when it is intact.
	Err error
}

// logReader is how entries are read: the WAL itself in the server, a reader that tolerates
// unreadable segments offline.
type logReader interface {
	GetLog(index uint64, log *raft.Log) error
}

// checkEntry reads index and checks it the way Raft and the FSM will use it. prevTerm is the
// previous entry's term (terms never go back).
func checkEntry(r logReader, index, prevTerm uint64) Status {
	st := Status{Index: index}
	var l raft.Log
	if err := r.GetLog(index, &l); err != nil {
		st.Err = fmt.Errorf("the entry cannot be read: %w", err)
		return st
	}
	st.Term, st.LogType, st.Size = l.Term, l.Type, len(l.Data)
	switch {
	case l.Index != index:
		st.Err = fmt.Errorf("the entry read back claims index %d", l.Index)
	case l.Term < prevTerm:
		st.Err = fmt.Errorf("the entry's term %d is below the previous entry's %d", l.Term, prevTerm)
	case l.Type > raft.LogConfiguration:
		st.Err = fmt.Errorf("unknown raft log type %d", l.Type)
	case l.Type == raft.LogConfiguration:
		st.Err = checkConfiguration(l.Data)
	case l.Type == raft.LogCommand && len(l.Data) > 0:
		// Checked first: a newer release's entry may not decode here, and it is not damage.
		if _, err := structs.EntrySchemaVersion(l.Extensions); err != nil {
			st.Err = err
			return st
		}
		e, err := structs.CheckEntry(l.Data)
		st.MsgType, st.Checksum, st.Legacy, st.Err = e.Type.String(), e.Checksum, !e.Checksummed, err
		if errors.Is(err, structs.ErrEntryChecksum) || errors.Is(err, structs.ErrEntryMalformed) {
			// The entry did not parse: its type byte is as untrustworthy as the rest.
			st.MsgType, st.Legacy = "?", false
		}
	}
	return st
}

// checkConfiguration decodes a configuration entry as Raft will; Raft panics on one that does
// not decode.
func checkConfiguration(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the configuration entry does not decode: %v", r)
		}
	}()
	cfg := raft.DecodeConfiguration(data)
	if len(cfg.Servers) == 0 {
		return fmt.Errorf("the configuration entry names no servers")
	}
	return nil
}

// VerifyLog checks every entry from the first index to the last, before Raft reads any: each
// can be read, is the index asked for, and (for commands) passes its checksum and decodes into
// its request type; and the log continues from the newest snapshot (snapshotIndex, 0 for
// none). It returns the first Damage found.
func VerifyLog(walDir string, segs []types.SegmentInfo, logs raft.LogStore, stable raft.StableStore, snapshotIndex uint64) error {
	first, err := logs.FirstIndex()
	if err != nil {
		return fmt.Errorf("reading the first log index in %s: %w", walDir, err)
	}
	last, err := logs.LastIndex()
	if err != nil {
		return fmt.Errorf("reading the last log index in %s: %w", walDir, err)
	}
	if last == 0 {
		// Raft writes the bootstrap configuration entry before it records a term, so a term
		// with neither entries nor a snapshot means the entries were lost.
		term, err := stable.GetUint64([]byte("CurrentTerm"))
		if err == nil && term > 0 && snapshotIndex == 0 {
			return &Damage{File: fileFor(walDir, segs, 1), Index: 1, Reason: fmt.Sprintf(
				"the log is empty and there is no snapshot, but the server has reached term %d: its entries were lost", term)}
		}
		return nil
	}
	if first > snapshotIndex+1 {
		// Raft would apply from the snapshot's index on and panic on the first missing entry.
		return &Damage{File: fileFor(walDir, segs, first), Index: first, Reason: fmt.Sprintf(
			"the log starts at index %d but the newest snapshot reaches only index %d: the entries between are lost", first, snapshotIndex)}
	}
	var prevTerm uint64
	for i := first; i <= last; i++ {
		st := checkEntry(logs, i, prevTerm)
		if errors.Is(st.Err, structs.ErrEntryNewerSchema) {
			// Not Damage: repairing would throw away a write the cluster committed.
			return fmt.Errorf("raft log entry at index %d in %s: %w", i, fileFor(walDir, segs, i), st.Err)
		}
		if st.Err != nil {
			return &Damage{File: fileFor(walDir, segs, i), Index: i, Reason: st.Err.Error()}
		}
		prevTerm = st.Term
	}
	return nil
}

// KeptOpen lends a metadata DB to a WAL without letting the WAL's Close close it. raft-wal
// v0.4.2 closes its metadata DB on Close, but the server replaces a WAL broken by a failed
// append with a new one on the same DB (its file lock forbids a second handle), and closes
// the old WAL only once the new one is open; the DB's owner closes it.
type KeptOpen struct{ *metadb.BoltMetaDB }

func (KeptOpen) Close() error { return nil }

// Progress is what a server knows of how far it had got, to compare its log against.
type Progress struct {
	// SnapshotIndex is the newest snapshot's index, 0 for none.
	SnapshotIndex uint64
	// Applied is the recorded applied index (0 when unknown) and AppliedPath the record's file.
	Applied     uint64
	AppliedPath string
}

// OpenVerified opens the WAL in walDir the way a server must (segmentSize 0 is raft-wal's
// default): the segment files are checked against the metadata before raft-wal opens them (it
// would recover a damaged tail as a shorter log without a word), every entry is checked
// after, and the log must reach the recorded applied index. A tail segment that a full disk
// kept raft-wal from allocating is removed first, so raft-wal creates it again. The metadata
// DB is returned too because the WAL does not close it (see KeptOpen), and it holds a file lock. On error
// nothing stays open.
func OpenVerified(walDir string, logger hclog.Logger, p Progress, segmentSize int) (*wal.WAL, *metadb.BoltMetaDB, error) {
	if segmentSize == 0 {
		segmentSize = wal.DefaultSegmentSize
	}
	meta := &metadb.BoltMetaDB{}
	persisted, err := meta.Load(walDir)
	if err != nil {
		_ = meta.Close()
		return nil, nil, fmt.Errorf("opening raft log metadata in %s: %w", walDir, err)
	}
	if err := CheckSegmentFiles(walDir, persisted.Segments, p.Applied); err != nil {
		_ = meta.Close()
		return nil, nil, withLostRange(err, walDir, persisted.Segments, p.Applied, p.AppliedPath)
	}
	if empty := UnallocatedTail(walDir, persisted.Segments, p.Applied); empty != "" {
		if err := os.Remove(empty); err != nil {
			_ = meta.Close()
			return nil, nil, fmt.Errorf("removing the log segment %s a full disk left unallocated: %w", empty, err)
		}
		logger.Warn("removed a log segment that could not be allocated (the disk was full); raft-wal creates it again", "file", empty)
	}
	w, err := wal.Open(walDir, wal.WithLogger(logger), wal.WithMetaStore(KeptOpen{meta}), wal.WithSegmentSize(segmentSize))
	if err != nil {
		_ = meta.Close()
		return nil, nil, fmt.Errorf("opening raft log in %s: %w", walDir, err)
	}
	fail := func(err error) (*wal.WAL, *metadb.BoltMetaDB, error) {
		_ = w.Close()
		_ = meta.Close()
		return nil, nil, err
	}
	if err := VerifyLog(walDir, persisted.Segments, w, w, p.SnapshotIndex); err != nil {
		return fail(err)
	}
	last, err := w.LastIndex()
	if err != nil {
		return fail(fmt.Errorf("reading the last log index in %s: %w", walDir, err))
	}
	if err := CheckApplied(walDir, persisted.Segments, last, p.SnapshotIndex, p.Applied, p.AppliedPath); err != nil {
		return fail(err)
	}
	return w, meta, nil
}

// CheckNewestSnapshot opens the newest snapshot as raft will before it restores it, which
// verifies the state file against the CRC-64 in its meta.json. Raft would skip a damaged one
// for an older snapshot (whose log entries may be compacted away, a panic later) or, with no
// other, fail with an error that names no file.
func CheckNewestSnapshot(store *raft.FileSnapshotStore, raftDir string) error {
	metas, err := store.List()
	if err != nil || len(metas) == 0 {
		return err
	}
	newest := metas[0]
	_, rc, err := store.Open(newest.ID)
	if err != nil {
		return &Damage{File: filepath.Join(raftDir, "snapshots", newest.ID, "state.bin"), Index: newest.Index, Reason: fmt.Sprintf(
			"the snapshot does not verify (%v): move its directory aside to start from the previous snapshot and the log, if they reach this index", err)}
	}
	return rc.Close()
}
