package drivers

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// TestRawExec_LogsDisabled: a task whose log paths are empty (logs disabled) runs, and its
// output creates no file.
func TestRawExec_LogsDisabled(t *testing.T) {
	cfg := taskConfig(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", `echo out; echo err >&2; touch ran`}})
	cfg.StdoutPath, cfg.StderrPath = "", ""
	h, err := RawExec{}.Start(cfg)
	must.NoError(t, err)
	res := waitResult(t, h, 5*time.Second)
	must.True(t, res.Successful(), must.Sprint(res))
	entries, err := os.ReadDir(cfg.TaskDir)
	must.NoError(t, err)
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".nomad-") { // the raw_exec shim's exit files
			names = append(names, e.Name())
		}
	}
	must.Eq(t, []string{"ran"}, names, must.Sprint("no log file"))
}
