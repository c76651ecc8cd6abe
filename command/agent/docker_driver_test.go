package agent

import (
	"net/url"
	"strings"
	"testing"

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
		{name: "missing image", config: map[string]any{"image": "nomadfork-absent:1"}, want: `image "nomadfork-absent:1" is not present on this node`},
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
