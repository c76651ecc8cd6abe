//go:build e2e

package e2e

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestTemplate_Binary: a job file run with `nomad job run` renders a template from a Nomad
// variable before its task starts, and restarts the task when the variable changes; the
// task's workload identity never reaches the agent's log.
func TestTemplate_Binary(t *testing.T) {
	cfg, url := writeConfig(t, t.TempDir(), rawExecClientConfig)
	a := startAgent(t, cfg, url)
	c := a.client()
	_, _, err := c.Variables().Create(&api.Variable{Path: "nomad/jobs/tmpl", Items: api.VariableItems{"greeting": "hello"}}, nil)
	must.NoError(t, err)

	jobFile := writeFile(t, "tmpl.nomad.hcl", `
job "tmpl" {
  datacenters = ["dc1"]
  group "g" {
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"start: $(cat local/app.conf) $GREETING\"; exec sleep 600"]
      }
      template {
        data        = <<EOT
greeting={{ with nomadVar "nomad/jobs/tmpl" }}{{ .greeting }}{{ end }}
EOT
        destination = "local/app.conf"
        change_mode = "restart"
        splay       = "0s"
      }
      template {
        data        = "GREETING=<< env \"NOMAD_JOB_NAME\" >>{{ kept }}"
        destination = "secrets/app.env"
        env         = true
        left_delimiter  = "<<"
        right_delimiter = ">>"
      }
    }
  }
}
`)
	out, code := cli(t, url, "", "job", "run", "-detach", jobFile)
	must.Zero(t, code, must.Sprint(out))
	must.StrNotContains(t, out, "template")

	var allocID string
	waitUntil(t, 30*time.Second, "the allocation to run", func() bool {
		allocs, _, err := c.Jobs().Allocations("tmpl", false, nil)
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
			return false
		}
		allocID = allocs[0].ID
		return true
	})
	stdout := func() string {
		alloc, _, err := c.Allocations().Info(allocID, nil)
		if err != nil {
			return ""
		}
		rc, err := c.AllocFS().Cat(alloc, "alloc/logs/app.stdout.0", nil)
		if err != nil {
			return ""
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return string(b)
	}
	waitUntil(t, 20*time.Second, "the first start's output", func() bool {
		return stdout() != ""
	})
	must.Eq(t, "start: greeting=hello tmpl{{ kept }}\n", stdout())

	_, _, err = c.Variables().Update(&api.Variable{Path: "nomad/jobs/tmpl", Items: api.VariableItems{"greeting": "bonjour"}}, nil)
	must.NoError(t, err)
	waitUntil(t, 30*time.Second, "the restart after the change", func() bool {
		return stdout() == "start: greeting=hello tmpl{{ kept }}\nstart: greeting=bonjour tmpl{{ kept }}\n"
	})
	alloc, _, err := c.Allocations().Info(allocID, nil)
	must.NoError(t, err)
	must.Eq(t, 1, alloc.TaskStates["app"].Restarts)
	must.StrNotContains(t, a.logs.String(), "eyJ")
	must.False(t, strings.Contains(a.logs.String(), "[TRACE]"), must.Sprint("consul-template's TRACE lines pass the agent's DEBUG level"))
}
