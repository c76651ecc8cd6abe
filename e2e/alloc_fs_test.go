//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestAllocFS_Binary: `nomad alloc fs` against a real agent lists a running allocation's
// directory, prints a file the task wrote, tails it, and is refused the task's secrets.
func TestAllocFS_Binary(t *testing.T) {
	cfg, url := writeConfig(t, t.TempDir(), `
client {
  enabled = true
  meta { rack = "r7" }
}
plugin "raw_exec" {
  config { enabled = true }
}
`)
	a := startAgent(t, cfg, url)
	c := a.client()

	job := api.NewServiceJob("files", "files", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("sh", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c",
		`printf 'one\ntwo\n%s\n' "${meta.rack}" > "$NOMAD_TASK_DIR/hello.txt"; printf s3cret > "$NOMAD_SECRETS_DIR/token"; exec sleep 600`}}
	job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	var allocID string
	waitUntil(t, 30*time.Second, "the allocation to run", func() bool {
		allocs, _, err := c.Jobs().Allocations("files", false, nil)
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false
		}
		allocID = allocs[0].ID
		return true
	})
	var out string
	var code int
	waitUntil(t, 20*time.Second, "the task's file", func() bool {
		out, code = cli(t, url, "", "alloc", "fs", allocID[:8], "sh/local/hello.txt")
		return code == 0
	})
	must.Eq(t, "one\ntwo\nr7\n", out)

	out, code = cli(t, url, "", "alloc", "fs", allocID[:8])
	must.Zero(t, code, must.Sprint(out))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	must.Len(t, 3, lines)
	must.StrHasPrefix(t, "Mode", lines[0])
	must.StrContains(t, lines[0], "Modified Time")
	must.StrHasSuffix(t, "alloc/", lines[1])
	must.StrHasSuffix(t, "sh/", lines[2])

	out, code = cli(t, url, "", "alloc", "fs", "-tail", "-n", "1", allocID[:8], "sh/local/hello.txt")
	must.Zero(t, code, must.Sprint(out))
	must.Eq(t, "r7\n", out)

	out, code = cli(t, url, "", "alloc", "fs", "-stat", "-H", allocID[:8], "sh/local/hello.txt")
	must.Zero(t, code, must.Sprint(out))
	must.StrContains(t, out, "hello.txt")
	must.StrContains(t, out, " 11 ") // "one\ntwo\nr7\n"

	out, code = cli(t, url, "", "alloc", "fs", allocID[:8], "sh/secrets/token")
	must.Eq(t, 1, code)
	must.StrContains(t, out, "403")
	must.StrNotContains(t, out, "s3cret")
}
