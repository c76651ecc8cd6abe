package agent

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// getWithToken GETs path from the agent with token as X-Nomad-Token.
func getWithToken(t *testing.T, ta *TestAgent, token, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", ta.URL()+path, nil)
	must.NoError(t, err)
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return resp.StatusCode, string(body)
}

// A task started without any token gets its workload identity from its client, as a file and
// as NOMAD_TOKEN, and reads its own job's variables with it; another job's are a 403, and
// once the allocation is stopped the identity opens nothing. The JWT is in no API answer.
func TestWorkloadIdentity_TaskReadsItsVariables(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.ACL.Enabled = true
		c.Plugins = append(c.Plugins, &PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	})
	var boot structs.ACLTokenUpsertResponse
	must.NoError(t, ta.Server().Endpoints.ACL.Bootstrap(&nomad.BootstrapRequest{}, &boot))
	mgmt := boot.Tokens[0].SecretID
	c := ta.Client(mgmt)

	for path, v := range map[string]string{"nomad/jobs/wi": "mine", "nomad/jobs/other": "theirs"} {
		_, _, err := c.Variables().Create(&api.Variable{Path: path, Items: api.VariableItems{"v": v}}, nil)
		must.NoError(t, err)
	}

	job := shJob("wi", "service", `printf %s "$NOMAD_TOKEN" > local/env_token
printf %s "${NOMAD_TOKEN_vault:-none}" > local/env_vault
while true; do sleep 0.05; done`)
	task := job.TaskGroups[0].Tasks[0]
	task.Identity = &api.WorkloadIdentity{Env: true, File: true}
	task.Identities = []*api.WorkloadIdentity{{Name: "vault", Audience: []string{"vault.io"}, File: true}}
	alloc := runningAlloc(t, c, job)

	dir := ta.Agent.Client().TaskDir(alloc.ID, "sh")
	var envToken string
	eventually(t, 10*time.Second, "the task wrote its environment", func() (bool, string) {
		raw, _ := os.ReadFile(filepath.Join(dir, "local", "env_vault"))
		b, _ := os.ReadFile(filepath.Join(dir, "local", "env_token"))
		envToken = string(b)
		return len(raw) > 0, string(raw)
	})
	fileToken, err := os.ReadFile(filepath.Join(dir, "secrets", "nomad_token"))
	must.NoError(t, err)
	must.Eq(t, string(fileToken), envToken)
	must.StrHasPrefix(t, "eyJ", envToken)
	// The named identity asked for a file only.
	vaultToken, err := os.ReadFile(filepath.Join(dir, "secrets", "nomad_vault.jwt"))
	must.NoError(t, err)
	must.StrHasPrefix(t, "eyJ", string(vaultToken))
	must.NotEq(t, envToken, string(vaultToken))
	raw, _ := os.ReadFile(filepath.Join(dir, "local", "env_vault"))
	must.Eq(t, "none", string(raw))

	status, body := getWithToken(t, ta, envToken, "/v1/var/nomad/jobs/wi")
	must.Eq(t, 200, status, must.Sprint(body))
	must.StrContains(t, body, `"mine"`)
	status, body = getWithToken(t, ta, envToken, "/v1/var/nomad/jobs/other")
	must.Eq(t, 403, status)
	must.StrHasPrefix(t, "Permission denied", body)
	must.StrNotContains(t, body, envToken)
	// It is no operator: reading jobs needs a policy bound to it.
	status, _ = getWithToken(t, ta, envToken, "/v1/jobs")
	must.Eq(t, 403, status)

	// The JWT appears in no API answer about the allocation, its job or the node.
	for _, path := range []string{
		"/v1/allocation/" + alloc.ID, "/v1/job/wi", "/v1/job/wi/allocations", "/v1/allocations",
		"/v1/node/" + alloc.NodeID, "/v1/node/" + alloc.NodeID + "/allocations", "/v1/vars",
	} {
		status, body := getWithToken(t, ta, mgmt, path)
		must.Eq(t, 200, status, must.Sprint(path))
		must.False(t, strings.Contains(body, envToken) || strings.Contains(body, string(vaultToken)),
			must.Sprintf("%s shows a workload identity", path))
	}

	_, _, err = c.Jobs().Deregister("wi", false, nil)
	must.NoError(t, err)
	eventually(t, 20*time.Second, "the stopped allocation's identity refused", func() (bool, string) {
		status, body := getWithToken(t, ta, envToken, "/v1/var/nomad/jobs/wi")
		return status == 403, body
	})
}
