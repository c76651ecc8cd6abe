package state

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/nomadfork/nomad/e2e/golden"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestRestore_GoldenSnapshots restores, in process, the snapshots every release left in
// testdata/golden (the saved archive and the Raft snapshot inside its data_dir): every row
// decodes into today's types, through the migrations from the release's schema version.
// TestGolden_DataDirs (e2e) checks the objects through the binary.
func TestRestore_GoldenSnapshots(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/golden/*/" + golden.ManifestFile)
	must.NoError(t, err)
	must.SliceNotEmpty(t, dirs)
	for _, manifest := range dirs {
		dir := filepath.Dir(manifest)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, golden.SnapshotFile))
			must.NoError(t, err)
			arch, err := raftutil.ReadSnapshotArchive(bytes.NewReader(raw), structs.MaxSnapshotSize)
			must.NoError(t, err)
			streams := map[string][]byte{"saved archive": arch.State}

			data := t.TempDir()
			must.NoError(t, golden.Extract(filepath.Join(dir, golden.DataDirFile), data))
			inDataDir, err := filepath.Glob(filepath.Join(data, "server", "raft", "snapshots", "*", "state.bin"))
			must.NoError(t, err)
			must.SliceNotEmpty(t, inDataDir, must.Sprint("the golden data_dir holds a Raft snapshot"))
			for _, path := range inDataDir {
				streams[path[len(data):]], err = os.ReadFile(path)
				must.NoError(t, err)
			}

			for name, stream := range streams {
				stats, err := raftutil.SnapshotTableStats(stream)
				must.NoError(t, err, must.Sprint(name))
				restored, err := Restore(Config{}, bytes.NewReader(stream))
				must.NoError(t, err, must.Sprint(name))
				for _, st := range stats {
					iter, err := restored.db.Txn(false).Get(st.Table, indexID)
					must.NoError(t, err)
					n := 0
					for row := iter.Next(); row != nil; row = iter.Next() {
						n++
					}
					must.Eq(t, st.Count, n, must.Sprintf("%s: rows of %s", name, st.Table))
				}
			}
		})
	}
}
