package agent

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

func dockerBatchJob(id string, config map[string]any) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("box", "docker")
	task.Config = config
	job.AddTaskGroup(api.NewTaskGroup("box", 1).AddTask(task))
	job.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	return job
}

// TestDockerDriver_ThroughAgent: a docker task of a job runs to completion with its output in
// the allocation's logs, and the node fingerprints the engine.
func TestDockerDriver_ThroughAgent(t *testing.T) {
	dockertest.BuildImage(t, dockertest.Client(t))
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")

	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, nodes)
	must.True(t, nodes[0].Drivers["docker"].Healthy)
	must.NotEq(t, "", nodes[0].Drivers["docker"].Attributes["driver.docker.version"])

	_, _, err = c.Jobs().Register(dockerBatchJob("hello", map[string]any{"image": dockertest.Image, "args": []string{"echo", "hi from docker"}}), nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "hello", map[string]int{"complete": 1})
	res := doHTTP(t, ta, "GET", logsPath(allocs[0].ID, url.Values{"task": {"box"}, "type": {"stdout"}, "plain": {"true"}}), nil, nil)
	must.Eq(t, "hi from docker\n", res.body)
}

// TestDockerDriver_BadTasksFailWithEvent: what cannot run fails the allocation with an event
// that says why, and the agent goes on.
func TestDockerDriver_BadTasksFailWithEvent(t *testing.T) {
	dockertest.Client(t)
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	cases := []struct {
		name   string
		config map[string]any
		want   string
	}{
		{name: "missing image", config: map[string]any{"image": "nomadfork-absent:1"}, want: `failed to pull image "nomadfork-absent:1"`},
		{name: "unknown key", config: map[string]any{"image": dockertest.Image, "privileged": true}, want: `unknown config key "privileged"`},
		{name: "invalid mount", config: map[string]any{"image": dockertest.Image, "mount": []map[string]any{{"type": "bind", "source": "/etc", "target": "/x"}}}, want: "only relative paths"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := "bad" + string(rune('a'+i))
			_, _, err := c.Jobs().Register(dockerBatchJob(id, tc.config), nil)
			must.NoError(t, err)
			failed := allocsIn(t, c, id, map[string]int{"failed": 1})
			alloc, _, err := c.Allocations().Info(failed[0].ID, nil)
			must.NoError(t, err)
			var messages []string
			for _, e := range alloc.TaskStates["box"].Events {
				messages = append(messages, e.DisplayMessage)
			}
			must.StrContains(t, strings.Join(messages, "\n"), tc.want)
		})
	}
	_, err := ta.Client("").Agent().Self()
	must.NoError(t, err)
}

// TestDockerDriver_PullsThroughAgent: an agent whose plugin block (parsed from HCL) points at
// a docker config.json pulls a job's image from a private registry, reporting the pull as
// task events; an image the registry lacks fails the start with an event naming the answer,
// and the task goes through its restart policy before the allocation fails.
func TestDockerDriver_PullsThroughAgent(t *testing.T) {
	cli := dockertest.Client(t)
	dockertest.BuildImage(t, cli)
	reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{TLS: true, Username: "agent", Password: "agent-pw"})
	ref := reg.Push(t, cli, dockertest.Image, "nomadfork/agentpull:v1")
	t.Cleanup(func() { dockertest.RemoveImage(t, cli, ref) })

	dir := t.TempDir()
	authFile := filepath.Join(dir, "config.json")
	must.NoError(t, os.WriteFile(authFile, []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`,
		reg.Addr, base64.StdEncoding.EncodeToString([]byte("agent:agent-pw")))), 0o600))
	parsed, err := loadConfigString(t, "docker.hcl", fmt.Sprintf(`
plugin "docker" {
  config {
    auth {
      config = %q
    }
    gc {
      image       = true
      image_delay = "1h"
    }
  }
}
`, authFile))
	must.NoError(t, err)
	ta := NewTestClientAgent(t, func(c *Config) { c.Plugins = append(c.Plugins, parsed.Plugins...) })
	c := ta.Client("")

	events := func(allocID string) string {
		alloc, _, err := c.Allocations().Info(allocID, nil)
		must.NoError(t, err)
		var out []string
		for _, e := range alloc.TaskStates["box"].Events {
			out = append(out, e.Type+": "+e.DisplayMessage)
		}
		return strings.Join(out, "\n")
	}

	_, _, err = c.Jobs().Register(dockerBatchJob("pulled", map[string]any{"image": ref, "args": []string{"echo", "pulled"}}), nil)
	must.NoError(t, err)
	done := allocsIn(t, c, "pulled", map[string]int{"complete": 1})
	must.StrContains(t, events(done[0].ID), "Driver: Downloading image "+ref)

	job := dockerBatchJob("absent", map[string]any{"image": reg.Addr + "/nomadfork/absent:v1"})
	job.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: new(1), Interval: new(time.Hour), Delay: new(100 * time.Millisecond), Mode: new("fail")}
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	failed := allocsIn(t, c, "absent", map[string]int{"failed": 1})
	got := events(failed[0].ID)
	must.StrContains(t, got, "Driver Failure: docker: failed to pull image")
	must.StrContains(t, got, "not found")
	must.StrContains(t, got, "Restarting: ")
	must.StrContains(t, got, "Not Restarting: ")
	must.StrNotContains(t, got, "agent-pw")
}
