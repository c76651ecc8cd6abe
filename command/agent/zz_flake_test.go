package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestZZFlake(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) { c.LogLevel = "DEBUG" })
	c := ta.Client("")
	job := api.NewBatchJob("done", "done", "global", 50)
	job.Datacenters = []string{"dc1"}
	job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(api.NewTask("t", "mock_driver").SetConfig("run_for", "0s")))
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocsIn(t, c, "done", map[string]int{"complete": 1})
}
