package raftutil

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// WALDir is where a server keeps its raft-wal segments and their metadata DB.
func WALDir(dataDir string) string { return filepath.Join(dataDir, "server", "raft", "wal") }

// RaftDir holds the WAL directory and the snapshots.
func RaftDir(dataDir string) string { return filepath.Join(dataDir, "server", "raft") }

// Damage is one finding about the log: the file it is in (a segment, or a snapshot's state
// file), the first index it affects, and what is wrong. The server refuses to start with it;
// the operator commands print it.
type Damage struct {
	File  string
	Index uint64
	// Through is the last index of a lost range when the damage is known to reach past Index
	// (from the record of the applied index); 0 otherwise.
	Through uint64
	Reason  string
	// entriesIntact marks damage that loses no entry (a segment raft cannot read but a
	// rewrite recovers whole), so no lost range is named for it.
	entriesIntact bool
}

// withLostRange names the range a file-level finding loses. A sealed segment's range is in the
// metadata; for the tail, the record of the applied index says how far it reached: everything
// from the damage to that index was applied, so acknowledged, and is gone with the file.
func withLostRange(err error, walDir string, segs []types.SegmentInfo, applied uint64, recordPath string) error {
	var d *Damage
	if !errors.As(err, &d) || d.entriesIntact || d.Through != 0 || d.Index == 0 {
		return err
	}
	for _, s := range segs {
		if segmentPath(walDir, s) != d.File || s.SealTime.IsZero() || s.MaxIndex < d.Index {
			continue
		}
		d.Through = s.MaxIndex
		d.Reason += fmt.Sprintf("; the metadata lists entries %d to %d in it: they are lost", d.Index, s.MaxIndex)
		return d
	}
	if applied < d.Index {
		return err
	}
	d.Through = applied
	d.Reason += fmt.Sprintf("; this server had applied up to index %d (recorded in %s): entries %d to %d are lost", applied, recordPath, d.Index, applied)
	return d
}

func (d *Damage) Error() string {
	if d.Index == 0 {
		return fmt.Sprintf("raft data damaged in %s: %s", d.File, d.Reason)
	}
	return fmt.Sprintf("raft log damaged at index %d in %s: %s", d.Index, d.File, d.Reason)
}

// segmentPath is the file raft-wal keeps a segment in; names carry the base index and ID.
func segmentPath(walDir string, info types.SegmentInfo) string {
	return filepath.Join(walDir, segment.FileName(info))
}

// fileFor names the segment file that holds index: the last segment whose base is at or below
// it (segments are sorted by base index and never overlap).
func fileFor(walDir string, segs []types.SegmentInfo, index uint64) string {
	file := ""
	for _, s := range segs {
		if s.BaseIndex <= index {
			file = segmentPath(walDir, s)
		}
	}
	if file == "" && len(segs) > 0 {
		file = segmentPath(walDir, segs[0])
	}
	return file
}

// raft-wal's on-disk layout (segment/format.go in raft-wal v0.4): a 32-byte file header, then
// 8-byte frame headers (type, 3 reserved bytes, length or CRC) each followed by its payload
// padded to 8 bytes. A commit frame's CRC-32C covers everything since the previous commit
// frame (the first one from the start of the file).
const (
	fileHeaderLen  = 32
	frameHeaderLen = 8
	segmentMagic   = 0x58eb6b0d
	frameEntry     = 1
	frameIndex     = 2
	frameCommit    = 3
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CheckSegmentFiles checks the files the WAL metadata lists before raft-wal opens them,
// because raft-wal recovers a missing, emptied or damaged tail segment as an empty or shorter
// one without a word: the entries in it would be lost silently and the server would come up
// with no configuration ("no known peers") or with acknowledged writes gone.
//
// applied is the recorded applied index (0 when unknown): a tail segment past it that holds no
// frame at all is one raft-wal could not allocate (a full disk), not damage; see
// UnallocatedTail.
func CheckSegmentFiles(walDir string, segs []types.SegmentInfo, applied uint64) error {
	if UnallocatedTail(walDir, segs, applied) != "" {
		segs = segs[:len(segs)-1]
	}
	for i, s := range segs {
		path := segmentPath(walDir, s)
		tail := i == len(segs)-1 && s.SealTime.IsZero()
		fi, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			return &Damage{File: path, Index: s.MinIndex, Reason: fmt.Sprintf("the segment file is missing: the entries from index %d on that it held are lost", s.MinIndex)}
		}
		if err != nil {
			return &Damage{File: path, Index: s.MinIndex, Reason: err.Error()}
		}
		if tail {
			if err := checkTail(path, s, fi.Size()); err != nil {
				return err
			}
			continue
		}
		if s.IndexStart == 0 {
			// raft-wal v0.4.0 marks the tail sealed on a tail truncation without writing its
			// index block (hashicorp/raft-wal#31), so after a restart none of its entries can
			// be read and raft panics. The entries are intact: a rewrite keeps them all.
			return &Damage{File: path, Index: s.MinIndex, entriesIntact: true, Reason: "the segment was sealed by a log truncation without an index block (raft-wal issue #31), so raft cannot read it; " +
				"its entries are intact, and 'nomad operator raft truncate -from=N' with N past the last index (see 'nomad operator raft logs') rewrites the log keeping all of them"}
		}
		if err := checkHeader(path, s); err != nil {
			return err
		}
	}
	return nil
}

func checkHeader(path string, s types.SegmentInfo) error {
	f, err := os.Open(path)
	if err != nil {
		return &Damage{File: path, Index: s.MinIndex, Reason: err.Error()}
	}
	defer f.Close()
	var hdr [fileHeaderLen]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return &Damage{File: path, Index: s.MinIndex, Reason: fmt.Sprintf("the segment file is truncated (no complete header: %v): the entries from index %d on are lost", err, s.MinIndex)}
	}
	if reason := headerProblem(hdr[:], s); reason != "" {
		return &Damage{File: path, Index: s.MinIndex, Reason: reason}
	}
	return nil
}

func headerProblem(hdr []byte, s types.SegmentInfo) string {
	switch {
	case binary.LittleEndian.Uint32(hdr[0:4]) != segmentMagic || hdr[7] != 0:
		return "the segment file header is damaged (bad magic or version)"
	case binary.LittleEndian.Uint64(hdr[8:16]) != s.BaseIndex:
		return fmt.Sprintf("the segment file header names base index %d, the metadata %d", binary.LittleEndian.Uint64(hdr[8:16]), s.BaseIndex)
	case binary.LittleEndian.Uint64(hdr[16:24]) != s.ID:
		return "the segment file header names another segment ID than the metadata"
	}
	return ""
}

// checkTail checks the segment raft-wal is still appending to. raft-wal allocates each segment
// at its full size limit when it creates it, so a shorter file was cut after the fact; and it
// reads frames only up to the first one it cannot parse, so a damaged frame header hides every
// batch after it. A batch cut short by a crash is the one case that is not damage: it was
// never acknowledged, and it can only be the last one.
func checkTail(path string, s types.SegmentInfo, size int64) error {
	if s.SizeLimit > 0 && size < int64(s.SizeLimit) {
		return &Damage{File: path, Index: s.MinIndex, Reason: fmt.Sprintf(
			"the segment file is %d bytes, shorter than the %d bytes it was allocated with: it was truncated, and the entries from index %d on that it held are lost "+
				"(had the server crashed while creating it, it held none yet)",
			size, s.SizeLimit, s.MinIndex)}
	}
	f, err := os.Open(path)
	if err != nil {
		return &Damage{File: path, Index: s.MinIndex, Reason: err.Error()}
	}
	defer f.Close()
	w, err := walkTail(f, size, s)
	if err != nil {
		return &Damage{File: path, Index: s.MinIndex, Reason: err.Error()}
	}
	if w.stoppedAt == 0 && w.commits == 0 && w.entries == 0 {
		// Zeros where the first frame should be: an empty segment, or a zeroed head that
		// hides what follows (raft-wal would read it as empty and overwrite it on the next
		// append). Two committed batches behind it tell them apart even without the record
		// of the applied index (a data dir from before it existed).
		later, err := committedBatchAfter(f, size, fileHeaderLen)
		if err != nil {
			return &Damage{File: path, Index: s.MinIndex, Reason: err.Error()}
		}
		if later {
			return &Damage{File: path, Index: s.MinIndex, Reason: fmt.Sprintf(
				"the segment's first frame is zeroed but committed batches follow it: raft-wal would read the segment as empty and drop the entries from index %d on", s.MinIndex)}
		}
		return nil
	}
	if w.stoppedAt == 0 {
		return nil
	}
	if w.commits > 0 {
		var hdr [fileHeaderLen]byte
		if _, err := f.ReadAt(hdr[:], 0); err != nil {
			return &Damage{File: path, Index: s.MinIndex, Reason: err.Error()}
		}
		if reason := headerProblem(hdr[:], s); reason != "" {
			return &Damage{File: path, Index: s.MinIndex, Reason: reason}
		}
	}
	later, err := committedBatchAfter(f, size, w.stoppedAt)
	if err != nil {
		return &Damage{File: path, Index: w.firstLost, Reason: err.Error()}
	}
	if later {
		return &Damage{File: path, Index: w.firstLost, Reason: fmt.Sprintf(
			"the frame header at offset %d is damaged and committed batches follow it: raft-wal would drop the entries from index %d on", w.stoppedAt, w.firstLost)}
	}
	return nil
}

// UnallocatedTail returns the path of the tail segment when it is a file raft-wal created but
// could not allocate or write (ENOSPC while rotating to a new segment): shorter than its size
// limit, not one frame in it, and based past the recorded applied index, so no entry this
// server applied, nor any it could have acknowledged, was ever in it. A shortened or zeroed
// segment that held applied entries starts at or below that index and stays damage. It
// returns "" otherwise, and always when the applied index is unknown (0).
func UnallocatedTail(walDir string, segs []types.SegmentInfo, applied uint64) string {
	if applied == 0 || len(segs) == 0 {
		return ""
	}
	s := segs[len(segs)-1]
	if !s.SealTime.IsZero() || s.BaseIndex <= applied {
		return ""
	}
	path := segmentPath(walDir, s)
	fi, err := os.Stat(path)
	if err != nil || (s.SizeLimit > 0 && fi.Size() >= int64(s.SizeLimit)) {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	w, err := walkTail(f, fi.Size(), s)
	if err != nil || w.commits > 0 || w.stoppedAt > 0 || w.entries > 0 {
		return ""
	}
	// A zeroed head hides the frames after it from the walk; committed batches behind it
	// mean the segment was written.
	if later, err := committedBatchAfter(f, fi.Size(), fileHeaderLen); err != nil || later {
		return ""
	}
	return path
}

type tailWalk struct {
	// stoppedAt is the offset of the first frame header that does not parse; 0 when the walk
	// ended on zeros or at the end of the file.
	stoppedAt int64
	// firstLost is the index of the first entry after the last commit frame read.
	firstLost uint64
	commits   int
	entries   uint64
}

func walkTail(f io.ReaderAt, size int64, s types.SegmentInfo) (tailWalk, error) {
	var w tailWalk
	entries, committed := uint64(0), uint64(0)
	var hdr [frameHeaderLen]byte
	for off := int64(fileHeaderLen); off+frameHeaderLen <= size; {
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			return w, fmt.Errorf("reading frame at offset %d: %w", off, err)
		}
		length := int64(binary.LittleEndian.Uint32(hdr[4:8]))
		switch {
		case hdr == [frameHeaderLen]byte{}:
			return w, nil
		case hdr[1] != 0 || hdr[2] != 0 || hdr[3] != 0:
		case hdr[0] == frameEntry || hdr[0] == frameIndex:
			next := off + frameHeaderLen + length + pad(length)
			if next > size {
				// A length past the end: raft-wal would read it as the end of the data.
				break
			}
			if hdr[0] == frameEntry {
				entries++
				w.entries++
			}
			off = next
			continue
		case hdr[0] == frameCommit:
			committed = entries
			w.commits++
			off += frameHeaderLen
			continue
		}
		w.stoppedAt = off
		w.firstLost = s.BaseIndex + committed
		return w, nil
	}
	return w, nil
}

func pad(n int64) int64 { return (frameHeaderLen - n%frameHeaderLen) % frameHeaderLen }

// committedBatchAfter reports whether a complete, CRC-verified batch lies after offset from:
// a commit frame whose CRC matches the bytes since an earlier commit frame that also lies
// after from. Bytes a crash left behind hold at most one batch, never such a pair.
func committedBatchAfter(f io.ReaderAt, size, from int64) (bool, error) {
	if size <= from {
		return false, nil
	}
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	var commits []int
	for p := 0; p+frameHeaderLen <= len(buf); p += frameHeaderLen {
		if buf[p] != frameCommit || !bytes.Equal(buf[p+1:p+4], []byte{0, 0, 0}) {
			continue
		}
		want := binary.LittleEndian.Uint32(buf[p+4 : p+8])
		for _, start := range commits {
			if crc32.Checksum(buf[start+frameHeaderLen:p], castagnoli) == want {
				return true, nil
			}
		}
		commits = append(commits, p)
	}
	return false, nil
}
