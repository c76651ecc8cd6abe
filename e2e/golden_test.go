//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nomadfork/nomad/e2e/golden"
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
