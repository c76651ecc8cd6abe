package docker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/shoenig/test/must"
)

// Even with volumes enabled, a task's absolute bind mount may not reach the agent's own
// directories: the allocation directories hold every task's secrets directory.
func TestSecurity_DockerMountOverAgentDirsRefused(t *testing.T) {
	base := t.TempDir()
	dataDir := filepath.Join(base, "data")
	allocRoot := filepath.Join(dataDir, "alloc")
	allocDir := filepath.Join(allocRoot, "a1", "alloc")
	taskDir := filepath.Join(allocRoot, "a1", "web")
	for _, d := range []string{allocDir, taskDir, filepath.Join(base, "shared")} {
		must.NoError(t, os.MkdirAll(d, 0o755))
	}
	d := &Driver{opts: Options{VolumesEnabled: true, ProtectedDirs: []string{dataDir, allocRoot}}}
	cfg := &drivers.TaskConfig{AllocDir: allocDir, TaskDir: taskDir}
	cases := []struct {
		name    string
		volume  string
		wantErr string
	}{
		{name: "another allocation's secrets", volume: filepath.Join(allocRoot, "other", "web", "secrets") + ":/s",
			wantErr: "contains or lies inside the agent's directory"},
		{name: "the host root", volume: "/:/host", wantErr: "contains or lies inside the agent's directory"},
		{name: "a path of its own", volume: filepath.Join(base, "shared") + ":/shared:ro"},
		{name: "a relative path in the task directory", volume: "local:/data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := d.binds(cfg, &taskConfig{Volumes: []string{tc.volume}})
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}
