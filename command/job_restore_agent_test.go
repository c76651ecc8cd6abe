package command

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

// TestJobRestore_ByPrefix purges a job on an agent, then restores it by the first characters
// of its purge record's ID as "job purged" prints them; a prefix matching no record fails.
func TestJobRestore_ByPrefix(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	c := ta.Client("")
	job := writeFile(t, "example.nomad.hcl", exampleHCL)
	code, out, errOut := runCLIWithin(t, 30*time.Second, ta.URL(), "job", "run", "-detach", job)
	must.Zero(t, code, must.Sprint(out, errOut))
	code, out, errOut = runCLIWithin(t, 30*time.Second, ta.URL(), "job", "stop", "-purge", "-yes", "-detach", "example")
	must.Zero(t, code, must.Sprint(out, errOut))

	var records []*purgeRecord
	waitUntil(t, 20*time.Second, "the purge record", func() bool {
		_, err := c.Raw().Query("/v1/jobs/purged", &records, nil)
		return err == nil && len(records) == 1
	})

	code, _, errOut = runCLI(t, ta.URL(), "", "job", "restore", "-yes", "-detach", "zzzz")
	must.Eq(t, 1, code)
	must.Eq(t, "No purge record with prefix or ID \"zzzz\" found\n", errOut)

	code, out, errOut = runCLIWithin(t, 30*time.Second, ta.URL(), "job", "restore", "-yes", "-detach", records[0].ID[:8])
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, out, `Job "example" restored`)
	j, _, err := c.Jobs().Info("example", nil)
	must.NoError(t, err)
	must.Eq(t, "example", *j.ID)
}
