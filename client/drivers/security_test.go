package drivers

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// The agent (root) opens a task's logs for every start: a link the task left in their place
// must not make it write to a file of the host, nor may a log path lead out of the
// allocation directory.
func TestSecurity_RawExecLogsStayInAllocDir(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "victim")
	must.NoError(t, os.WriteFile(outside, []byte("keep"), 0o600))
	cases := []struct {
		name  string
		setup func(cfg *TaskConfig)
	}{
		{name: "link in place of the log", setup: func(cfg *TaskConfig) {
			must.NoError(t, os.Symlink(outside, cfg.StdoutPath))
		}},
		{name: "log path outside the allocation directory", setup: func(cfg *TaskConfig) {
			cfg.StderrPath = outside
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := taskConfig(t, map[string]any{"command": "/bin/sh", "args": []string{"-c", "echo pwned; echo pwned >&2"}})
			tc.setup(cfg)
			h, err := RawExec{}.Start(cfg)
			if err == nil {
				waitResult(t, h, 5*time.Second)
			}
			must.Error(t, err)
			got, err := os.ReadFile(outside)
			must.NoError(t, err)
			must.Eq(t, "keep", string(got))
		})
	}
}
