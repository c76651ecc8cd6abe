package client

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func listLogs(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must.NoError(t, err)
		out[e.Name()] = string(raw)
	}
	return out
}

func TestRotateLog(t *testing.T) {
	cases := []struct {
		name   string
		limits logLimits
		before map[string]string
		want   map[string]string
	}{
		{
			name:   "under the limit",
			limits: logLimits{maxFiles: 3, maxSize: 10},
			before: map[string]string{"t.stdout.0": "short"},
			want:   map[string]string{"t.stdout.0": "short"},
		},
		{
			name:   "first rotation",
			limits: logLimits{maxFiles: 3, maxSize: 10},
			before: map[string]string{"t.stdout.0": "0123456789ab"},
			want:   map[string]string{"t.stdout.0": "", "t.stdout.1": "0123456789ab"},
		},
		{
			name:   "next index, oldest dropped",
			limits: logLimits{maxFiles: 3, maxSize: 10},
			before: map[string]string{"t.stdout.0": "0123456789ab", "t.stdout.4": "old", "t.stdout.5": "older? no: newer"},
			want:   map[string]string{"t.stdout.0": "", "t.stdout.5": "older? no: newer", "t.stdout.6": "0123456789ab"},
		},
		{
			name:   "one file kept: truncated only",
			limits: logLimits{maxFiles: 1, maxSize: 10},
			before: map[string]string{"t.stdout.0": "0123456789ab", "t.stdout.1": "stale"},
			want:   map[string]string{"t.stdout.0": ""},
		},
		{
			name:   "other tasks and names untouched",
			limits: logLimits{maxFiles: 2, maxSize: 1},
			before: map[string]string{"t.stdout.0": "xx", "t.stdout.01": "not an index", "tt.stdout.1": "other task", "t.stderr.0": "big but other type"},
			want:   map[string]string{"t.stdout.0": "", "t.stdout.1": "xx", "t.stdout.01": "not an index", "tt.stdout.1": "other task", "t.stderr.0": "big but other type"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.before {
				must.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
			}
			must.NoError(t, rotateLog(dir, "t.stdout", tc.limits))
			must.Eq(t, tc.want, listLogs(t, dir))
		})
	}
}

// A link the task put in place of its live log is not followed out of the logs directory:
// the file it points to is neither copied nor truncated.
func TestRotateLog_LinkRefused(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	must.NoError(t, os.WriteFile(secret, []byte("0123456789 secret"), 0o600))
	must.NoError(t, os.Symlink(secret, filepath.Join(dir, "t.stdout.0")))
	must.Error(t, rotateLog(dir, "t.stdout", logLimits{maxFiles: 3, maxSize: 1}))
	raw, err := os.ReadFile(secret)
	must.NoError(t, err)
	must.Eq(t, "0123456789 secret", string(raw))
	entries, err := os.ReadDir(dir)
	must.NoError(t, err)
	must.SliceLen(t, 1, entries)
}

func TestTaskLogLimits(t *testing.T) {
	must.Eq(t, logLimits{maxFiles: 10, maxSize: 10 << 20}, taskLogLimits(nil))
	must.Eq(t, logLimits{maxFiles: 2, maxSize: 1 << 20}, taskLogLimits(&api.LogConfig{MaxFiles: new(2), MaxFileSizeMB: new(1)}))
	must.Eq(t, logLimits{maxFiles: 10, maxSize: 10 << 20}, taskLogLimits(&api.LogConfig{MaxFiles: new(0)}))
}

// TestClient_RotatesTaskLogs: a task that writes past max_file_size has its live log copied
// to an archive and truncated while it runs, keeping max_files files.
func TestClient_RotatesTaskLogs(t *testing.T) {
	c, s := testClientNoState(t)
	task := &api.Task{Name: "t", Driver: "raw_exec", LogConfig: &api.LogConfig{MaxFiles: new(2), MaxFileSizeMB: new(1)},
		Config: map[string]any{"command": "/bin/sh", "args": []any{"-c",
			`for i in 1 2 3; do head -c 1200000 /dev/zero | tr '\0' x; sleep 1.5; done; exec sleep 600`}}}
	s.setAllocs(testAlloc("a1", structs.JobTypeService, task))
	waitFor(t, "running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	logs := filepath.Join(c.config.AllocDir, "a1", "alloc", "logs")
	// Names only: the files change under the reader while the task runs.
	stdoutLogs := func() []string {
		entries, err := os.ReadDir(logs)
		must.NoError(t, err)
		var names []string
		for _, e := range entries {
			if n := e.Name(); strings.HasPrefix(n, "t.stdout.") && n != "t.stdout.rotating" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return names
	}
	// Three chunks written, two files kept: the live one and the newest archive, once the
	// first archive made way for the second.
	// An archive holds what the live file had when it passed the limit.
	waitFor(t, "two rotations", func() bool {
		names := stdoutLogs()
		if len(names) != 2 || names[0] != "t.stdout.0" || names[1] == "t.stdout.1" {
			return false
		}
		info, err := os.Stat(filepath.Join(logs, names[1]))
		return err == nil && info.Size() >= 1<<20
	})
}
