package command

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

const deployJobHCL = `
job "JOBNAME" {
  datacenters = ["dc1"]
  update {
    max_parallel      = 1
    min_healthy_time  = "1s"
    healthy_deadline  = "20s"
    progress_deadline = "30s"
    auto_revert       = false
  }
  group "web" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "SCRIPT"]
      }
    }
  }
}
`

// runCLIWithin is runCLI with a deadline, as job run follows a deployment for as long as it
// lasts.
func runCLIWithin(t *testing.T, limit time.Duration, addr string, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := runCLI(t, addr, "", args...)
		done <- result{code, out, errOut}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errOut
	case <-time.After(limit):
		t.Fatalf("%v still running after %s", args, limit)
		return 0, "", ""
	}
}

// TestJobRun_MonitorsDeployment runs jobs through an agent with a raw_exec client: a healthy
// task's run ends when its deployment succeeds (exit 0), a task that exits at once makes the
// deployment fail and job run exit 1, -verbose prints full IDs and the allocations, and
// -detach returns with the evaluation ID alone.
func TestJobRun_MonitorsDeployment(t *testing.T) {
	ta := agenttest.NewClientAgent(t, nil)
	c := ta.Client("")
	waitUntil(t, 30*time.Second, "the agent's node to be ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	job := func(name, script string) string {
		return writeFile(t, name+".nomad.hcl", strings.NewReplacer("JOBNAME", name, "SCRIPT", script).Replace(deployJobHCL))
	}

	t.Run("healthy", func(t *testing.T) {
		code, out, errOut := runCLIWithin(t, 90*time.Second, ta.URL(), "job", "run", job("good", "sleep 600"))
		must.Eq(t, 0, code, must.Sprint(out, errOut))
		must.StrContains(t, out, "Evaluation within deployment:")
		must.StrContains(t, out, "Monitoring deployment")
		must.RegexMatch(t, regexp.MustCompile(`✓ Deployment "[0-9a-f]{8}" successful`), out)
		must.StrContains(t, out, "Deployment completed successfully")
	})

	t.Run("failing task", func(t *testing.T) {
		code, out, errOut := runCLIWithin(t, 90*time.Second, ta.URL(), "job", "run", "-verbose", job("bad", "exit 1"))
		must.Eq(t, 1, code, must.Sprint(out, errOut))
		must.RegexMatch(t, regexp.MustCompile(`! Deployment "[0-9a-f-]{36}" failed`), out)
		must.StrContains(t, out, "Allocations")
		must.StrNotContains(t, out, "successful")
	})

	t.Run("detach", func(t *testing.T) {
		code, out, errOut := runCLIWithin(t, 30*time.Second, ta.URL(), "job", "run", "-detach", job("quick", "sleep 600"))
		must.Eq(t, 0, code, must.Sprint(out, errOut))
		must.StrContains(t, out, "Evaluation ID: ")
		must.StrNotContains(t, out, "Monitoring")
	})
}

// TestJobRun_AutoRevert runs a healthy version, then one whose task exits at once with
// auto_revert set: job run says the deployment failed and rolled the job back to version 0,
// follows the reverted version's deployment to success, and still exits 1, since the
// version submitted is not the one running.
func TestJobRun_AutoRevert(t *testing.T) {
	ta := agenttest.NewClientAgent(t, nil)
	c := ta.Client("")
	waitUntil(t, 30*time.Second, "the agent's node to be ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})
	job := func(script string) string {
		hcl := strings.NewReplacer("JOBNAME", "reverting", "SCRIPT", script, "auto_revert       = false", "auto_revert       = true").Replace(deployJobHCL)
		return writeFile(t, "reverting.nomad.hcl", hcl)
	}
	code, out, errOut := runCLIWithin(t, 90*time.Second, ta.URL(), "job", "run", job("sleep 600"))
	must.Eq(t, 0, code, must.Sprint(out, errOut))

	code, out, errOut = runCLIWithin(t, 120*time.Second, ta.URL(), "job", "run", job("exit 1"))
	must.Eq(t, 1, code, must.Sprint(out, errOut))
	must.RegexMatch(t, regexp.MustCompile(`! Deployment "[0-9a-f]{8}" failed`), out)
	must.RegexMatch(t, regexp.MustCompile(`Deployment "[0-9a-f]{8}" failed and auto_revert rolled job "reverting" back to version 0`), out)
	must.RegexMatch(t, regexp.MustCompile(`✓ Deployment "[0-9a-f]{8}" successful`), out)

	j, _, err := c.Jobs().Info("reverting", nil)
	must.NoError(t, err)
	must.Eq(t, uint64(2), *j.Version)
	must.Eq[any](t, []any{"-c", "sleep 600"}, j.TaskGroups[0].Tasks[0].Config["args"])
}
