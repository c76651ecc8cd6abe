//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

// TestDockerPull_PrivateRegistry runs a docker job whose image only a private registry has
// (a docker-registry of the test's own, TLS with htpasswd), with the credentials in the
// docker config.json the agent's plugin block names: the binary pulls it, reports the pull
// as task events, and the task's output is in its logs.
func TestDockerPull_PrivateRegistry(t *testing.T) {
	if !dockerWorks(t) {
		t.Skip("no Docker Engine")
	}
	cli := dockertest.Client(t)
	reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{TLS: true, Username: "e2e", Password: "e2e-registry-pw"})
	ref := reg.Push(t, cli, dockertest.Image, "nomadfork/e2epull:v1")
	t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })
	authFile := filepath.Join(t.TempDir(), "config.json")
	must.NoError(t, os.WriteFile(authFile, []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`,
		reg.Addr, base64.StdEncoding.EncodeToString([]byte("e2e:e2e-registry-pw")))), 0o600))

	config, url := writeConfig(t, t.TempDir(), fmt.Sprintf(`
client {
  enabled = true
}
plugin "docker" {
  config {
    auth {
      config = %q
    }
  }
}
`, authFile))
	agent := startAgent(t, config, url)
	c := agent.client()

	job := api.NewBatchJob("pulled", "pulled", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("box", "docker")
	task.Config = map[string]any{"image": ref, "args": []string{"echo", "pulled-by-e2e"}}
	job.AddTaskGroup(api.NewTaskGroup("box", 1).AddTask(task))
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)

	var allocID string
	waitUntil(t, 2*time.Minute, "the pulled task to complete", func() bool {
		allocs, _, err := c.Jobs().Allocations("pulled", false, nil)
		if err != nil || len(allocs) != 1 {
			return false
		}
		must.NotEq(t, "failed", allocs[0].ClientStatus, must.Sprintf("events: %s", taskEvents(allocs[0].TaskStates)))
		allocID = allocs[0].ID
		return allocs[0].ClientStatus == "complete"
	})
	alloc, _, err := c.Allocations().Info(allocID, nil)
	must.NoError(t, err)
	var events []string
	for _, e := range alloc.TaskStates["box"].Events {
		events = append(events, e.Type+": "+e.DisplayMessage)
	}
	must.StrContains(t, strings.Join(events, "\n"), "Driver: Downloading image "+ref)
	must.StrNotContains(t, strings.Join(events, "\n"), "e2e-registry-pw")

	logs, err := c.AllocFS().Cat(alloc, "alloc/logs/box.stdout.0", nil)
	must.NoError(t, err)
	defer logs.Close()
	out, err := io.ReadAll(logs)
	must.NoError(t, err)
	must.StrContains(t, string(out), "pulled-by-e2e")
}
