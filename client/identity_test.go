package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// envTask is a batch raw_exec task that writes its identity variables to local/env.
func envTask(name string) *api.Task {
	return &api.Task{Name: name, Driver: "raw_exec", Config: map[string]any{
		"command": "/bin/sh", "args": []any{"-c",
			`printf '%s|%s|%s' "${NOMAD_TOKEN:-unset}" "${NOMAD_TOKEN_vault:-unset}" "${NOMAD_TOKEN_consul:-unset}" > "$NOMAD_TASK_DIR/env"`},
	}}
}

func TestClient_WorkloadIdentityFilesAndEnv(t *testing.T) {
	cases := []struct {
		name      string
		identity  *api.WorkloadIdentity
		named     []*api.WorkloadIdentity
		wantEnv   string
		wantFiles map[string]string // relative to the task directory
		noFiles   []string
		wantCalls int
	}{
		{
			name:      "nothing exposed fetches nothing",
			wantEnv:   "unset|unset|unset",
			noFiles:   []string{"secrets/nomad_token"},
			wantCalls: 0,
		},
		{
			name:      "default as env and file",
			identity:  &api.WorkloadIdentity{Env: true, File: true},
			wantEnv:   "jwt.a1.t.default|unset|unset",
			wantFiles: map[string]string{"secrets/nomad_token": "jwt.a1.t.default"},
			wantCalls: 1,
		},
		{
			name:      "default as env only",
			identity:  &api.WorkloadIdentity{Env: true},
			wantEnv:   "jwt.a1.t.default|unset|unset",
			noFiles:   []string{"secrets/nomad_token"},
			wantCalls: 1,
		},
		{
			name: "named identities",
			named: []*api.WorkloadIdentity{
				{Name: "vault", File: true, Env: true},
				{Name: "consul", File: true, Filepath: "local/consul.jwt"},
				{Name: "hidden"},
			},
			wantEnv: "unset|jwt.a1.t.vault|unset",
			wantFiles: map[string]string{
				"secrets/nomad_vault.jwt": "jwt.a1.t.vault",
				"local/consul.jwt":        "jwt.a1.t.consul",
			},
			noFiles:   []string{"secrets/nomad_token", "secrets/nomad_hidden.jwt", "secrets/nomad_consul.jwt"},
			wantCalls: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := testClientNoState(t)
			task := envTask("t")
			task.Identity, task.Identities = tc.identity, tc.named
			s.setAllocs(testAlloc("a1", structs.JobTypeBatch, task))
			waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
			taskDir := filepath.Join(c.config.AllocDir, "a1", "t")
			must.Eq(t, tc.wantEnv, taskFile(c, "a1", "t", "env"))
			for rel, want := range tc.wantFiles {
				raw, err := os.ReadFile(filepath.Join(taskDir, rel))
				must.NoError(t, err)
				must.Eq(t, want, string(raw))
			}
			for _, rel := range tc.noFiles {
				_, err := os.Stat(filepath.Join(taskDir, rel))
				must.True(t, os.IsNotExist(err), must.Sprintf("%s exists", rel))
			}
			s.mu.Lock()
			must.Eq(t, tc.wantCalls, s.signCalls)
			s.mu.Unlock()
		})
	}
}

// A filepath that leaves the task directory fails the task's setup; nothing is written
// outside.
func TestSecurity_WorkloadIdentityFilepathStaysInside(t *testing.T) {
	for _, fp := range []string{"../escape.jwt", "../../escape.jwt", "/tmp/escape.jwt", "secrets/../../escape.jwt"} {
		t.Run(fp, func(t *testing.T) {
			c, s := testClientNoState(t)
			task := envTask("t")
			task.Identity = &api.WorkloadIdentity{File: true, Filepath: fp}
			s.setAllocs(testAlloc("a1", structs.JobTypeBatch, task))
			waitFor(t, "failed", reportedStatus(s, "a1", structs.AllocClientStatusFailed))
			r := s.lastReport("a1")
			must.Eq(t, structs.TaskEventSetupFailure, lastEvent(r, "t").Type)
			for _, p := range []string{filepath.Join(c.config.AllocDir, "a1", "escape.jwt"), filepath.Join(c.config.AllocDir, "escape.jwt")} {
				_, err := os.Stat(p)
				must.True(t, os.IsNotExist(err))
			}
		})
	}
}

// A refusal from the servers fails the task's setup without retrying and without the
// identity in the task's events.
func TestClient_WorkloadIdentityRefused(t *testing.T) {
	_, s := testClientNoState(t)
	s.mu.Lock()
	s.signErr = structs.PermissionDenied("allocation a1 is not placed on node x")
	s.mu.Unlock()
	task := envTask("t")
	task.Identity = &api.WorkloadIdentity{Env: true}
	s.setAllocs(testAlloc("a1", structs.JobTypeBatch, task))
	waitFor(t, "failed", reportedStatus(s, "a1", structs.AllocClientStatusFailed))
	ev := lastEvent(s.lastReport("a1"), "t")
	must.Eq(t, structs.TaskEventSetupFailure, ev.Type)
	must.StrContains(t, ev.SetupError, "Permission denied")
	s.mu.Lock()
	must.Eq(t, 1, s.signCalls)
	s.mu.Unlock()
}
