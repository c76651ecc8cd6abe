//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/nomadfork/nomad/e2e/golden"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// goldenRoot holds one golden dir per release (README "Upgrades").
const goldenRoot = "../testdata/golden"

// TestGolden_DataDirs opens the data_dir every release left (killed with -9, with a Raft
// snapshot and log entries after it) with the current binary and checks every object of its
// manifest through the HTTP API; then restores the snapshot archive that release saved into
// a fresh agent and checks what the snapshot held.
func TestGolden_DataDirs(t *testing.T) {
	dirs, err := os.ReadDir(goldenRoot)
	must.NoError(t, err)
	must.SliceNotEmpty(t, dirs, must.Sprint("no golden dir under ", goldenRoot))
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		dir := filepath.Join(goldenRoot, d.Name())
		t.Run(d.Name(), func(t *testing.T) {
			m, err := golden.ReadManifest(dir)
			must.NoError(t, err)
			t.Logf("%s was written by %s", d.Name(), m.Binary)

			t.Run("data_dir", func(t *testing.T) {
				// A copy: the agent writes to the data dir it opens.
				dataDir := filepath.Join(t.TempDir(), "data")
				must.NoError(t, golden.Extract(filepath.Join(dir, golden.DataDirFile), dataDir))
				a := startGoldenAgent(t, dataDir)
				c, err := a.Client(m.ManagementToken)
				must.NoError(t, err)
				must.NoError(t, golden.Check(c, m, false))
			})

			t.Run("snapshot restore", func(t *testing.T) {
				a := startGoldenAgent(t, filepath.Join(t.TempDir(), "data"))
				fresh := bootstrapACL(t, a.Addr)
				out, code := cli(t, a.Addr, fresh, "operator", "snapshot", "restore", filepath.Join(dir, golden.SnapshotFile))
				must.Eq(t, 0, code, must.Sprint(out))
				// The restored ACL state is the saved cluster's: its management token reads.
				c, err := a.Client(m.ManagementToken)
				must.NoError(t, err)
				must.NoError(t, golden.Check(c, m, true))
			})
		})
	}
}

// TestGolden_NewerSchemaRefused: a snapshot archive whose state says it was written at a
// schema version newer than the binary's is refused by `operator snapshot restore`, naming
// both versions, and the cluster's state is left as it was.
func TestGolden_NewerSchemaRefused(t *testing.T) {
	saved, err := filepath.Glob(filepath.Join(goldenRoot, "*", golden.SnapshotFile))
	must.NoError(t, err)
	must.SliceNotEmpty(t, saved)
	raw, err := os.ReadFile(saved[0])
	must.NoError(t, err)
	arch, err := raftutil.ReadSnapshotArchive(bytes.NewReader(raw), structs.MaxSnapshotSize)
	must.NoError(t, err)

	// A first record of a newer version, as a later release would write it; the rest
	// (whatever it opens with) is never reached.
	var state bytes.Buffer
	must.NoError(t, codec.NewEncoder(&state, structs.MsgpackHandle).Encode(map[string]any{
		"Table": structs.SnapshotSchemaTable, "Schema": structs.SchemaVersion + 1}))
	state.Write(arch.State)
	meta := arch.Meta
	meta.Size = int64(state.Len())
	var newer bytes.Buffer
	must.NoError(t, raftutil.WriteSnapshotArchive(&newer, &meta, &state))
	file := writeFile(t, "newer.snap", newer.String())

	a := startGoldenAgent(t, filepath.Join(t.TempDir(), "data"))
	token := bootstrapACL(t, a.Addr)
	out, code := cli(t, a.Addr, token, "operator", "snapshot", "restore", file)
	must.NonZero(t, code)
	must.StrContains(t, out, "newer than this binary's")
	// The bootstrap token of this cluster still works: nothing was restored.
	out, code = cli(t, a.Addr, token, "acl", "token", "self")
	must.Eq(t, 0, code, must.Sprint(out))
}

func startGoldenAgent(t *testing.T, dataDir string) *golden.Agent {
	t.Helper()
	a, err := golden.StartAgent(binary(t), dataDir, t.TempDir())
	must.NoError(t, err)
	t.Cleanup(func() {
		a.Kill()
		if t.Failed() {
			t.Logf("agent output:\n%s", a.Logs.String())
		}
	})
	return a
}
