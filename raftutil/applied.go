package raftutil

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/raft-wal/types"
)

// AppliedFileName is the record of how far a server's state machine had applied its log, kept
// in the raft directory beside (not inside) the WAL directory, so that losing or replacing the
// WAL does not take the record with it.
const AppliedFileName = "applied-index"

// AppliedFile is the record's path for a data dir.
func AppliedFile(dataDir string) string { return filepath.Join(RaftDir(dataDir), AppliedFileName) }

// The record is 16 bytes at offset 0: a magic word, the index, and a CRC-32C of both. One
// write of 16 bytes at offset 0 never straddles a sector, so a crash leaves either the old or
// the new record, and the CRC catches anything else.
const (
	appliedMagic = 0x6e667269 // "nfri"
	appliedLen   = 16
)

// ErrAppliedRecord is a record that is present but does not verify.
var ErrAppliedRecord = errors.New("the record of the last applied index does not verify")

// ReadApplied returns the index recorded in path; 0 when there is no record yet (a data dir
// written before the record existed, or a server that has applied nothing).
func ReadApplied(path string) (uint64, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(raw) == 0) {
		// Empty: created, and the first write never reached the disk (a crash right after
		// the start). Nothing was recorded yet.
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(raw) < appliedLen || binary.LittleEndian.Uint32(raw[0:4]) != appliedMagic ||
		crc32.Checksum(raw[0:12], castagnoli) != binary.LittleEndian.Uint32(raw[12:16]) {
		return 0, ErrAppliedRecord
	}
	return binary.LittleEndian.Uint64(raw[4:12]), nil
}

func encodeApplied(index uint64) [appliedLen]byte {
	var b [appliedLen]byte
	binary.LittleEndian.PutUint32(b[0:4], appliedMagic)
	binary.LittleEndian.PutUint64(b[4:12], index)
	binary.LittleEndian.PutUint32(b[12:16], crc32.Checksum(b[0:12], castagnoli))
	return b
}

// WriteApplied replaces the record durably. The offline repairs use it after they drop
// entries on purpose, so the server does not then refuse the shorter log they leave.
func WriteApplied(path string, index uint64) error {
	b := encodeApplied(index)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b[:]); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// AppliedRecord keeps the record up to date while a server runs. Advance writes without an
// fsync: the entries it counts were fsynced into the log before Raft applied them, so the
// record is never ahead of the durable log, and a write survives a killed process in the page
// cache. Only a power loss or kernel crash can lose the newest updates (those the kernel had
// not written back yet, about 30 s with Linux defaults); the record is then lower than it
// should be, which weakens the check but never refuses an intact log. Sync and Close make it
// exact at snapshots and on shutdown.
type AppliedRecord struct {
	path string

	mu      sync.Mutex
	f       *os.File
	index   uint64
	written uint64
	err     error
}

// OpenAppliedRecord opens (creating it when missing) the record at path and returns it with
// the index it holds.
func OpenAppliedRecord(path string) (*AppliedRecord, error) {
	index, err := ReadApplied(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	return &AppliedRecord{path: path, f: f, index: index, written: index}, nil
}

// Path is the record's file.
func (r *AppliedRecord) Path() string { return r.path }

// Index is the highest index recorded.
func (r *AppliedRecord) Index() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.index
}

// Advance records index when it is past the recorded one. A failed write (a full disk) is
// kept and retried on the next call; it does not stop the server, since the log itself is
// what holds the data.
func (r *AppliedRecord) Advance(index uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if index <= r.index || r.f == nil {
		return
	}
	r.index = index
	b := encodeApplied(index)
	if _, err := r.f.WriteAt(b[:], 0); err != nil {
		r.err = err
		return
	}
	r.written, r.err = index, nil
}

// Sync makes the recorded index durable.
func (r *AppliedRecord) Sync() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.syncLocked()
}

func (r *AppliedRecord) syncLocked() error {
	if r.f == nil {
		return nil
	}
	if r.written != r.index {
		b := encodeApplied(r.index)
		if _, err := r.f.WriteAt(b[:], 0); err != nil {
			return err
		}
		r.written = r.index
	}
	return r.f.Sync()
}

// Close syncs and closes the record; later Advance calls do nothing.
func (r *AppliedRecord) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.syncLocked()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	r.f = nil
	return err
}

// CheckApplied refuses a log that ends before the recorded applied index: entries this server
// had applied (so they were committed and acknowledged) are gone. last is the log's last
// index and snapshotIndex the newest snapshot's; together they are what Raft can restore.
func CheckApplied(walDir string, segs []types.SegmentInfo, last, snapshotIndex, applied uint64, recordPath string) error {
	covered := max(last, snapshotIndex)
	if applied <= covered {
		return nil
	}
	return &Damage{
		File:    fileFor(walDir, segs, covered+1),
		Index:   covered + 1,
		Through: applied,
		Reason: fmt.Sprintf("the log ends at index %d (newest snapshot: %d), but this server had applied up to index %d (recorded in %s): entries %d to %d are lost",
			last, snapshotIndex, applied, recordPath, covered+1, applied),
	}
}
