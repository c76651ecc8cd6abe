//go:build e2e

package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// TestCLI_VariablesEncryptedAtRest writes a variable with the real CLI, reads it back, and
// then looks through every file of the agent's data dir (Raft log, snapshots, metadata)
// for the secret: it must be nowhere, before and after a kill -9 and restart, while the
// restarted agent still decrypts it.
func TestCLI_VariablesEncryptedAtRest(t *testing.T) {
	dataDir := t.TempDir()
	config, url := writeConfig(t, dataDir, "")
	agent := startAgent(t, config, url)

	const secret = "e2e-very-secret-value-7f3a"
	secretFile := writeFile(t, "pass", secret)
	out, code := cli(t, url, "", "var", "put", "app/db", "user=admin", "pass=@"+secretFile)
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, `Successfully wrote variable "app/db"`)

	out, code = cli(t, url, "", "var", "get", "-item=pass", "app/db")
	must.Eq(t, 0, code, must.Sprint(out))
	must.Eq(t, secret+"\n", out)

	out, code = cli(t, url, "", "var", "list")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "app/db")
	must.StrNotContains(t, out, secret)

	out, code = cli(t, url, "", "var", "put", "-check-index=1", "app/db", "pass=x")
	must.Eq(t, 1, code, must.Sprint(out))
	must.StrContains(t, out, "Check-and-set conflict")

	assertNotInDir := func() {
		t.Helper()
		sawPath := false // the variable's path is metadata, stored in clear: proof the walk reads the log
		must.NoError(t, filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sawPath = sawPath || bytes.Contains(raw, []byte("app/db"))
			must.False(t, bytes.Contains(raw, []byte(secret)), must.Sprintf("%s holds the secret in clear", path))
			return nil
		}))
		must.True(t, sawPath, must.Sprint("no file of the data dir holds the variable's path: the walk read nothing"))
	}
	assertNotInDir()
	must.StrNotContains(t, agent.logs.String(), secret)

	agent.kill9()
	agent = startAgent(t, config, url)
	out, code = cli(t, url, "", "var", "get", "-item=pass", "app/db")
	must.Eq(t, 0, code, must.Sprint(out))
	must.Eq(t, secret+"\n", out)
	assertNotInDir()

	out, code = cli(t, url, "", "var", "purge", "app/db")
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, "", "var", "get", "app/db")
	must.Eq(t, 1, code, must.Sprint(out))
	must.StrContains(t, out, `Variable "app/db" not found`)
	must.False(t, strings.Contains(agent.logs.String(), secret))
}

// TestCLI_NodePoolsAndSchedulerConfig drives the node pool and scheduler configuration
// commands against the real binary.
func TestCLI_NodePoolsAndSchedulerConfig(t *testing.T) {
	config, url := writeConfig(t, t.TempDir(), "")
	startAgent(t, config, url)

	spec := writeFile(t, "pool.hcl", `node_pool "gpu" {
  description = "GPU nodes"
  meta {
    team = "ml"
  }
}`)
	out, code := cli(t, url, "", "node", "pool", "apply", spec)
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, "", "node", "pool", "list")
	must.Eq(t, 0, code, must.Sprint(out))
	for _, name := range []string{"all", "default", "gpu"} {
		must.StrContains(t, out, name)
	}
	out, code = cli(t, url, "", "node", "pool", "info", "gpu")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "Meta team")
	out, code = cli(t, url, "", "node", "pool", "delete", "default")
	must.Eq(t, 1, code, must.Sprint(out))
	must.StrContains(t, out, `deleting built-in node pool "default" is not allowed`)
	out, code = cli(t, url, "", "node", "pool", "delete", "gpu")
	must.Eq(t, 0, code, must.Sprint(out))

	out, code = cli(t, url, "", "operator", "scheduler", "set-config", "-scheduler-algorithm=spread")
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, "", "operator", "scheduler", "get-config")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "spread")
}
