//go:build e2e

package e2e

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestGovernance_ProtectionPurgePlanAndVerifiedHistory walks README's deletion protection,
// purge preview and tamper-evident history with the real binary: a protected job resists a
// management purge (CLI and API, 409), the garbage collector and a kill -9; once unprotected,
// `job stop -purge` shows what would go and purges only on "y"; the purge history verifies,
// before and after a restart.
func TestGovernance_ProtectionPurgePlanAndVerifiedHistory(t *testing.T) {
	config, url := writeConfig(t, t.TempDir(), "acl { enabled = true }")
	a := startAgent(t, config, url)

	mgmt := bootstrapACL(t, url)

	jobFile := writeFile(t, "critical.nomad.hcl", `job "critical" {
  group "pay" {
    task "ledger" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 1; done"]
      }
    }
  }
}`)
	out, code := cli(t, url, mgmt, "job", "run", "-detach", jobFile)
	must.Eq(t, 0, code, must.Sprint(out))

	const reason = "payments depend on it"
	out, code = cli(t, url, mgmt, "job", "protect", "-reason", reason, "critical")
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, mgmt, "job", "status", "critical")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "Protected")
	must.StrContains(t, out, reason)

	// Management cannot purge a protected job: not from the CLI, with or without -yes ...
	for _, args := range [][]string{{"job", "stop", "-purge", "-yes", "-detach", "critical"}, {"job", "stop", "-purge", "critical"}} {
		out, code = cliInput(t, url, mgmt, "y\n", args...)
		must.Eq(t, 1, code, must.Sprint(out))
		must.StrContains(t, out, "protected")
		must.StrContains(t, out, reason)
	}
	// ... nor through the API, which answers 409 naming the reason.
	c := a.client()
	c.SetSecretID(mgmt)
	_, _, err := c.Jobs().DeregisterOpts("critical", &api.DeregisterOptions{Purge: true}, nil)
	must.ErrorContains(t, err, "409")
	must.ErrorContains(t, err, reason)

	// Stopping is allowed, and the garbage collector keeps the stopped, protected job.
	out, code = cli(t, url, mgmt, "job", "stop", "-detach", "critical")
	must.Eq(t, 0, code, must.Sprint(out))
	// Only a dead job with nothing running is what a forced GC would remove.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		job, _, err := c.Jobs().Info("critical", nil)
		return err == nil && job.Status != nil && *job.Status == "dead"
	}), wait.Timeout(30*time.Second), wait.Gap(200*time.Millisecond)))
	must.NoError(t, c.System().GarbageCollect())
	job, _, err := c.Jobs().Info("critical", nil)
	must.NoError(t, err)
	must.True(t, *job.Stop)

	// The protection is in the Raft log: it survives kill -9.
	a = a.restart()
	c = a.client()
	c.SetSecretID(mgmt)
	out, code = cli(t, url, mgmt, "job", "status", "critical")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, reason)

	out, code = cli(t, url, mgmt, "job", "unprotect", "critical")
	must.Eq(t, 0, code, must.Sprint(out))

	// The purge preview, then "no": nothing is removed.
	out, code = cliInput(t, url, mgmt, "n\n", "job", "stop", "-purge", "critical")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, `Purging job "critical" in namespace "default" removes:`)
	must.StrContains(t, out, "Versions")
	must.StrContains(t, out, "Allocations")
	must.StrContains(t, out, "Cancelling job purge")
	_, _, err = c.Jobs().Info("critical", nil)
	must.NoError(t, err)

	// "y" purges.
	out, code = cliInput(t, url, mgmt, "y\n", "job", "stop", "-purge", "-detach", "critical")
	must.Eq(t, 0, code, must.Sprint(out))
	_, _, err = c.Jobs().Info("critical", nil)
	must.ErrorContains(t, err, "404")

	// The history verifies, and still does after a kill -9.
	for round := 0; round < 2; round++ {
		out, code = cli(t, url, mgmt, "job", "purged", "-verify", "-json")
		must.Eq(t, 0, code, must.Sprint(out))
		var v struct {
			Valid   bool
			Records int
		}
		must.NoError(t, json.Unmarshal([]byte(out), &v), must.Sprint(out))
		must.True(t, v.Valid, must.Sprint(out))
		must.Eq(t, 1, v.Records, must.Sprint(out))
		if round == 0 {
			a = a.restart()
		}
	}
}
