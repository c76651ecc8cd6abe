package agent

import (
	"net/url"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// TestTaskEnv_Interpolation: a raw_exec task written in HCL whose args use ${NOMAD_ALLOC_ID}
// and ${attr.kernel.name} and whose env uses ${meta.rack} prints the values its node and
// allocation give them; an unknown variable stays as written.
func TestTaskEnv_Interpolation(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Client.Meta = map[string]string{"rack": "r42"}
		c.Plugins = append(c.Plugins, &PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	})
	c := ta.Client("")
	job, err := c.Jobs().ParseHCL(`
job "interp" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"$1|$2|$RACK|$WHERE|$3\"", "sh", "${NOMAD_ALLOC_ID}", "${attr.kernel.name}", "${nope.unknown}"]
      }
      env {
        RACK  = "${meta.rack}"
        WHERE = "${node.datacenter}/${NOMAD_TASK_NAME}"
      }
    }
  }
}`, true)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	stubs := allocsIn(t, c, "interp", map[string]int{"complete": 1})
	alloc, _, err := c.Allocations().Info(stubs[0].ID, nil)
	must.NoError(t, err)
	want := alloc.ID + "|linux|r42|dc1/t|${nope.unknown}\n"
	eventually(t, 10*time.Second, "the task's output", func() (bool, string) {
		res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"t"}, "type": {"stdout"}, "plain": {"true"}}), nil, nil)
		return res.body == want, res.body
	})
	// The stored job keeps the references: interpolation happens on the node.
	stored, _, err := c.Jobs().Info("interp", nil)
	must.NoError(t, err)
	must.Eq(t, "${meta.rack}", stored.TaskGroups[0].Tasks[0].Env["RACK"])
}
