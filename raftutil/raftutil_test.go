package raftutil

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

const testSegmentSize = 8192

// testLog writes n entries (a configuration entry, then namespace deletes of "ns-<index>"),
// one batch each, into small segments so that several are sealed. It returns the data dir
// and the segment files in order.
func testLog(t *testing.T, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	walDir := WALDir(dir)
	must.NoError(t, os.MkdirAll(walDir, 0o700))
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(walDir, wal.WithMetaStore(meta), wal.WithSegmentSize(testSegmentSize))
	must.NoError(t, err)
	cfg := raft.EncodeConfiguration(raft.Configuration{Servers: []raft.Server{{ID: "s1", Address: "s1"}}})
	must.NoError(t, w.StoreLog(&raft.Log{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: cfg}))
	for i := 2; i <= n; i++ {
		buf, err := structs.EncodeEntry(structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{fmt.Sprintf("ns-%d", i)}})
		must.NoError(t, err)
		must.NoError(t, w.StoreLog(&raft.Log{Index: uint64(i), Term: 1, Type: raft.LogCommand, Data: buf}))
	}
	must.NoError(t, w.SetUint64([]byte("CurrentTerm"), 1))
	must.NoError(t, w.Close())
	must.NoError(t, meta.Close())
	files, err := filepath.Glob(filepath.Join(walDir, "*.wal"))
	must.NoError(t, err)
	sort.Strings(files)
	must.Greater(t, 2, len(files), must.Sprint("the test needs sealed segments"))
	return dir, files
}

func openVerified(dir string) error {
	w, meta, err := OpenVerified(WALDir(dir), hclog.NewNullLogger(), Progress{}, testSegmentSize)
	if err == nil {
		_ = w.Close()
		_ = meta.Close()
	}
	return err
}

// frameOffset finds the frame of index in a segment file (see the layout in segments.go).
func frameOffset(t *testing.T, raw []byte, index uint64) int {
	t.Helper()
	codec := &wal.BinaryCodec{}
	for off := fileHeaderLen; off+frameHeaderLen <= len(raw) && raw[off] != 0; {
		length := int(binary.LittleEndian.Uint32(raw[off+4 : off+8]))
		switch raw[off] {
		case frameCommit:
			off += frameHeaderLen
			continue
		case frameEntry:
			var l raft.Log
			must.NoError(t, codec.Decode(raw[off+8:off+8+length], &l))
			if l.Index == index {
				return off
			}
		}
		off += frameHeaderLen + length + int(pad(int64(length)))
	}
	t.Fatalf("no frame for %d", index)
	return 0
}

func TestVerify_DamageInSealedAndTailSegments(t *testing.T) {
	cases := []struct {
		name string
		// damage changes the files and returns the file and index the error must name
		damage func(t *testing.T, files []string) (string, uint64)
		want   string
	}{
		{name: "intact", damage: func(*testing.T, []string) (string, uint64) { return "", 0 }},
		{
			name: "sealed segment emptied",
			damage: func(t *testing.T, files []string) (string, uint64) {
				must.NoError(t, os.Truncate(files[0], 0))
				return files[0], 1
			},
			want: "no complete header",
		},
		{
			name: "sealed segment deleted",
			damage: func(t *testing.T, files []string) (string, uint64) {
				must.NoError(t, os.Remove(files[1]))
				return files[1], baseIndex(files[1])
			},
			want: "the segment file is missing",
		},
		{
			name: "payload byte flipped in a sealed segment",
			damage: func(t *testing.T, files []string) (string, uint64) {
				return files[1], flip(t, files[1], baseIndex(files[1])+2, func(raw []byte, off int) { raw[off+frameHeaderLen+10] ^= 0x20 })
			},
			want: "checksum mismatch",
		},
		{
			name: "frame header damaged in a sealed segment",
			damage: func(t *testing.T, files []string) (string, uint64) {
				return files[0], flip(t, files[0], 10, func(raw []byte, off int) { raw[off] = 0x09 })
			},
			want: "corrupt frame header",
		},
		{
			name: "tail segment emptied",
			damage: func(t *testing.T, files []string) (string, uint64) {
				tail := files[len(files)-1]
				must.NoError(t, os.Truncate(tail, 0))
				return tail, baseIndex(tail)
			},
			want: "it was truncated",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, files := testLog(t, 300)
			file, index := tc.damage(t, files)
			err := openVerified(dir)
			if file == "" {
				must.NoError(t, err)
				return
			}
			var d *Damage
			must.True(t, errors.As(err, &d), must.Sprintf("not a Damage: %v", err))
			must.Eq(t, file, d.File)
			must.Eq(t, index, d.Index)
			must.StrContains(t, d.Reason, tc.want)

			// The offline listing reports the same damage.
			o, err := OpenOffline(dir, time.Second)
			must.NoError(t, err)
			defer o.Close()
			found := false
			for _, fd := range o.Damages {
				found = found || (fd.File == file && fd.Index == index)
			}
			must.NoError(t, o.Walk(func(st Status) error {
				found = found || (st.Err != nil && st.Index == index && o.File(st.Index) == file)
				if errors.Is(st.Err, structs.ErrEntryChecksum) {
					// A damaged entry is not reported as legacy, nor by a type read from it.
					must.Eq(t, "?", st.MsgType)
					must.False(t, st.Legacy)
				}
				return nil
			}))
			must.True(t, found, must.Sprint("the offline listing misses the damage"))
		})
	}
}

func baseIndex(file string) uint64 {
	var base, id uint64
	_, _ = fmt.Sscanf(filepath.Base(file), "%020d-%016x.wal", &base, &id)
	return base
}

func flip(t *testing.T, file string, index uint64, change func(raw []byte, off int)) uint64 {
	t.Helper()
	raw, err := os.ReadFile(file)
	must.NoError(t, err)
	change(raw, frameOffset(t, raw, index))
	must.NoError(t, os.WriteFile(file, raw, 0o644))
	return index
}

func writeSnapshotMeta(t *testing.T, dir string, index uint64) {
	t.Helper()
	snapDir := filepath.Join(RaftDir(dir), "snapshots", fmt.Sprintf("1-%d-1", index))
	must.NoError(t, os.MkdirAll(snapDir, 0o700))
	raw, err := json.Marshal(raft.SnapshotMeta{ID: filepath.Base(snapDir), Index: index, Term: 1, Version: 1})
	must.NoError(t, err)
	must.NoError(t, os.WriteFile(filepath.Join(snapDir, "meta.json"), raw, 0o600))
}

func TestTruncate_KeepsThePrefixOrTheSnapshot(t *testing.T) {
	cases := []struct {
		name      string
		snapshot  uint64
		from      uint64
		wantFirst uint64
		wantLast  uint64
		wantErr   string
	}{
		{name: "after the snapshot", snapshot: 50, from: 120, wantFirst: 1, wantLast: 119},
		{name: "at or below the snapshot", snapshot: 50, from: 50, wantFirst: 0, wantLast: 0},
		{name: "no snapshot keeps the configuration entry", from: 2, wantFirst: 1, wantLast: 1},
		{name: "nothing left", from: 1, wantErr: "neither entries nor a snapshot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := testLog(t, 200)
			if tc.snapshot > 0 {
				writeSnapshotMeta(t, dir, tc.snapshot)
			}
			o, err := OpenOffline(dir, time.Second)
			must.NoError(t, err)
			rep, err := o.Truncate(tc.from, time.Unix(0, 0))
			o.Close()
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.wantLast, rep.Last)

			o, err = OpenOffline(dir, time.Second)
			must.NoError(t, err)
			defer o.Close()
			first, last := o.Range()
			must.Eq(t, tc.wantFirst, first)
			must.Eq(t, tc.wantLast, last)
			must.SliceEmpty(t, o.Damages)
			term, err := o.meta.GetStable([]byte("CurrentTerm"))
			must.NoError(t, err)
			must.NotNil(t, term, must.Sprint("the term was not carried over"))
		})
	}
}

// raft-wal v0.4.0 sealed a segment on a tail truncation (which raft does on a follower whose
// log conflicts with the leader's) without writing its index block, and raft then panicked
// reading it after a restart (raft-wal issue #31). The patched v0.4.2 in third_party writes
// the index block, so the same steps now restart with every kept entry and take appends.
func TestVerify_TailTruncationThenRestartKeepsTheLog(t *testing.T) {
	dir := truncatedTailLog(t)
	must.NoError(t, openVerified(dir))

	w, meta, err := OpenVerified(WALDir(dir), hclog.NewNullLogger(), Progress{}, testSegmentSize)
	must.NoError(t, err)
	defer meta.Close()
	defer w.Close()
	last, err := w.LastIndex()
	must.NoError(t, err)
	must.Eq(t, uint64(7), last)
	var got raft.Log
	must.NoError(t, w.GetLog(7, &got))
	must.NoError(t, w.StoreLogs([]*raft.Log{{Index: 8, Term: 2, Type: raft.LogNoop}}))
}

// A data dir written by v0.4.0 still holds such a segment: the server must refuse with the
// remedy, and the remedy must keep every entry.
func TestVerify_SegmentSealedByTailTruncationIsRewritten(t *testing.T) {
	dir := truncatedTailLog(t)
	// Make the meta say what v0.4.0 wrote: the old tail sealed with no index block.
	meta := &metadb.BoltMetaDB{}
	st, err := meta.Load(WALDir(dir))
	must.NoError(t, err)
	sealedWithoutIndex := false
	for i := range st.Segments {
		if !st.Segments[i].SealTime.IsZero() && st.Segments[i].IndexStart != 0 {
			st.Segments[i].IndexStart = 0
			sealedWithoutIndex = true
		}
	}
	must.True(t, sealedWithoutIndex, must.Sprint("the truncation sealed no segment"))
	must.NoError(t, meta.CommitState(st))
	must.NoError(t, meta.Close())

	err = openVerified(dir)
	var d *Damage
	must.True(t, errors.As(err, &d), must.Sprintf("not a Damage: %v", err))
	must.Eq(t, uint64(1), d.Index)
	must.StrContains(t, d.Reason, "raft-wal issue #31")
	must.StrContains(t, d.Reason, "with N past the last index")

	o, err := OpenOffline(dir, time.Second)
	must.NoError(t, err)
	_, last := o.Range()
	must.Eq(t, uint64(7), last)
	rep, err := o.Truncate(last+1, time.Unix(0, 0))
	o.Close()
	must.NoError(t, err)
	must.Eq(t, uint64(7), rep.Last)
	must.NoError(t, openVerified(dir))
}

// truncatedTailLog writes entries 1-10 and removes 8-10 from the tail, as raft does on a
// follower whose log conflicts with a new leader's.
func truncatedTailLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	walDir := WALDir(dir)
	must.NoError(t, os.MkdirAll(walDir, 0o700))
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(walDir, wal.WithMetaStore(meta))
	must.NoError(t, err)
	cfg := raft.EncodeConfiguration(raft.Configuration{Servers: []raft.Server{{ID: "s1", Address: "s1"}}})
	logs := []*raft.Log{{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: cfg}}
	for i := uint64(2); i <= 10; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogNoop})
	}
	must.NoError(t, w.StoreLogs(logs))
	must.NoError(t, w.DeleteRange(8, 10))
	must.NoError(t, w.SetUint64([]byte("CurrentTerm"), 1))
	must.NoError(t, w.Close())
	must.NoError(t, meta.Close())
	return dir
}

// A log compacted after a snapshot starts past index 1; without that snapshot (moved aside,
// lost) raft would apply from index 1 and panic on the first missing entry.
func TestVerify_LogMustContinueFromTheSnapshot(t *testing.T) {
	dir, _ := testLog(t, 200)
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(WALDir(dir), wal.WithMetaStore(meta), wal.WithSegmentSize(testSegmentSize))
	must.NoError(t, err)
	must.NoError(t, w.DeleteRange(1, 100))
	must.NoError(t, w.Close())
	must.NoError(t, meta.Close())

	for _, tc := range []struct {
		name     string
		snapshot uint64
		wantErr  string
	}{
		{name: "snapshot reaches the log", snapshot: 100},
		{name: "snapshot beyond the log start", snapshot: 150},
		{name: "no snapshot", snapshot: 0, wantErr: "the log starts at index 101 but the newest snapshot reaches only index 0"},
		{name: "older snapshot", snapshot: 50, wantErr: "the log starts at index 101 but the newest snapshot reaches only index 50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, meta, err := OpenVerified(WALDir(dir), hclog.NewNullLogger(), Progress{SnapshotIndex: tc.snapshot}, testSegmentSize)
			if tc.wantErr == "" {
				must.NoError(t, err)
				_ = w.Close()
				_ = meta.Close()
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// Every server of a cluster skips a poison-pill entry the same way only if the no-op keeps the
// entry's own term, not a neighbour's.
func TestSkip_KeepsTheEntrysOwnTerm(t *testing.T) {
	dir := t.TempDir()
	walDir := WALDir(dir)
	must.NoError(t, os.MkdirAll(walDir, 0o700))
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(walDir, wal.WithMetaStore(meta))
	must.NoError(t, err)
	cfg := raft.EncodeConfiguration(raft.Configuration{Servers: []raft.Server{{ID: "s1", Address: "s1"}}})
	good, err := structs.EncodeEntry(structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{})
	must.NoError(t, err)
	bad, err := structs.EncodeEntry(structs.NamespaceDeleteRequestType, "not a request")
	must.NoError(t, err)
	must.NoError(t, w.StoreLogs([]*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: cfg},
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: good},
		{Index: 3, Term: 3, Type: raft.LogCommand, Data: bad},
		{Index: 4, Term: 3, Type: raft.LogCommand, Data: good},
	}))
	must.NoError(t, w.Close())
	must.NoError(t, meta.Close())

	o, err := OpenOffline(dir, time.Second)
	must.NoError(t, err)
	_, err = o.Skip(3, time.Unix(0, 0))
	o.Close()
	must.NoError(t, err)

	o, err = OpenOffline(dir, time.Second)
	must.NoError(t, err)
	defer o.Close()
	var l raft.Log
	must.NoError(t, o.GetLog(3, &l))
	must.Eq(t, raft.LogNoop, l.Type)
	must.Eq(t, uint64(3), l.Term)
}
