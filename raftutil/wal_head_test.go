package raftutil

import (
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/shoenig/test/must"
)

// TestWAL_CompactedHeadIsGone: once raft compacts its log behind a snapshot (DeleteRange from
// the first index), the entries before the new first index must not be read back, also while
// they still sit in the one, unsealed segment: a leader that could still read them would
// replay them to a lagging follower instead of sending it the snapshot (third_party/raft-wal
// PATCHES.md).
func TestWAL_CompactedHeadIsGone(t *testing.T) {
	dir := t.TempDir()
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(dir, wal.WithMetaStore(meta))
	must.NoError(t, err)
	t.Cleanup(func() { _ = w.Close(); _ = meta.Close() })
	var logs []*raft.Log
	for i := uint64(1); i <= 100; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogNoop})
	}
	must.NoError(t, w.StoreLogs(logs))
	must.NoError(t, w.DeleteRange(1, 60))

	first, err := w.FirstIndex()
	must.NoError(t, err)
	must.Eq(t, 61, first)
	var l raft.Log
	for _, idx := range []uint64{1, 30, 60} {
		must.ErrorIs(t, w.GetLog(idx, &l), raft.ErrLogNotFound, must.Sprintf("index %d was compacted", idx))
	}
	for _, idx := range []uint64{61, 100} {
		must.NoError(t, w.GetLog(idx, &l))
		must.Eq(t, idx, l.Index)
	}
}
