package nomad

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"
)

func snapshotDirs(t *testing.T, raftDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(raftDir, "snapshots"))
	must.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestSnapshotStore_RemovesLeftoversAtStart(t *testing.T) {
	raftDir := t.TempDir()
	leftover := filepath.Join(raftDir, "snapshots", "2-10-1700000000000.tmp")
	must.NoError(t, os.MkdirAll(leftover, 0o700))
	must.NoError(t, os.WriteFile(filepath.Join(leftover, "state.bin"), []byte("half a snapshot"), 0o600))

	_, err := newSnapshotStore(raftDir, 2, hclog.NewNullLogger())
	must.NoError(t, err)
	must.SliceEmpty(t, snapshotDirs(t, raftDir))
}

// A Close that fails (here: meta.json cannot be written, as on a full disk) leaves no
// temporary directory behind, and the snapshot taken before it stays whole.
func TestSnapshotStore_FailedCloseRemovesTemporary(t *testing.T) {
	raftDir := t.TempDir()
	store, err := newSnapshotStore(raftDir, 2, hclog.NewNullLogger())
	must.NoError(t, err)

	take := func(index uint64) raft.SnapshotSink {
		sink, err := store.Create(raft.SnapshotVersionMax, index, 1, raft.Configuration{}, 1, nil)
		must.NoError(t, err)
		_, err = sink.Write(bytes.Repeat([]byte{byte(index)}, 1024))
		must.NoError(t, err)
		return sink
	}
	good := take(10)
	must.NoError(t, good.Close())

	bad := take(20)
	meta := filepath.Join(raftDir, "snapshots", bad.ID()+".tmp", "meta.json")
	must.NoError(t, os.Remove(meta))
	must.NoError(t, os.Mkdir(meta, 0o700))
	must.Error(t, bad.Close())

	must.Eq(t, []string{good.ID()}, snapshotDirs(t, raftDir))
	metas, err := store.List()
	must.NoError(t, err)
	must.Len(t, 1, metas)
	_, rc, err := store.Open(good.ID())
	must.NoError(t, err)
	defer rc.Close()
	buf := new(bytes.Buffer)
	_, err = buf.ReadFrom(rc)
	must.NoError(t, err)
	must.Eq(t, bytes.Repeat([]byte{10}, 1024), buf.Bytes())
}
