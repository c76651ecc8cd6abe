// Package pathtest holds file-tree helpers for tests that check what was, or was not, created
// on disk. It is imported by tests only.
package pathtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"
)

// Tree lists every path under dir, relative to it ("." first), in lexical order.
func Tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	must.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	}))
	return out
}
