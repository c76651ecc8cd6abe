//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestSecurity_TraversalNameAndHugeCount runs a real agent with a client, as root: a task
// named to lead out of the data dir and a group count of 99,999,999,999 both get a 400, and
// nothing appears outside data_dir.
func TestSecurity_TraversalNameAndHugeCount(t *testing.T) {
	base := t.TempDir()
	dataDir := filepath.Join(base, "data")
	config, url := writeConfig(t, dataDir, `
client { enabled = true }
plugin "raw_exec" {
  config { enabled = true }
}`)
	agent := startAgent(t, config, url)
	c := agent.client()

	cases := []struct {
		name     string
		mutate   func(job *api.Job)
		wantBody string
	}{
		{name: "traversal task name", mutate: func(job *api.Job) {
			job.TaskGroups[0].Tasks[0].Name = "../../../../../../../../" + base + "/x"
		}, wantBody: `name must not contain "/"`},
		{name: "relative escape", mutate: func(job *api.Job) { job.TaskGroups[0].Tasks[0].Name = "../../../escaped" },
			wantBody: `name must not contain "/"`},
		{name: "huge count", mutate: func(job *api.Job) { job.TaskGroups[0].Count = new(99_999_999_999) },
			wantBody: "job_max_count (50000)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob("evil")
			tc.mutate(job)
			_, _, err := c.Jobs().Register(job, nil)
			must.Error(t, err)
			must.StrContains(t, err.Error(), "400")
			must.StrContains(t, err.Error(), tc.wantBody)
		})
	}
	_, _, err := c.Jobs().Info("evil", nil)
	must.ErrorContains(t, err, "not found")
	entries, err := os.ReadDir(base)
	must.NoError(t, err)
	must.Len(t, 1, entries, must.Sprint("something was created beside the data dir"))
	must.Eq(t, "data", entries[0].Name())
}

// TestSecurity_StopCancelsWorkAcrossRestart: a job whose allocations cannot be placed leaves
// a blocked evaluation; stopping it cancels that, and after kill -9 and a restart no
// evaluation of the job is pending or blocked and nothing is placed.
func TestSecurity_StopCancelsWorkAcrossRestart(t *testing.T) {
	dataDir := t.TempDir()
	config, url := writeConfig(t, dataDir, `
client { enabled = true }
plugin "raw_exec" {
  config { enabled = true }
}`)
	agent := startAgent(t, config, url)
	c := agent.client()

	job := testJob("big")
	job.Datacenters = []string{"nowhere"}
	job.TaskGroups[0].Count = new(50000)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	waitEvals(t, c, "big", func(evals []*api.Evaluation) bool {
		for _, e := range evals {
			if e.Status == "blocked" {
				return true
			}
		}
		return false
	})
	_, _, err = c.Jobs().Deregister("big", false, nil)
	must.NoError(t, err)
	agent.kill9()

	agent = startAgent(t, config, url)
	c = agent.client()
	waitEvals(t, c, "big", func(evals []*api.Evaluation) bool {
		for _, e := range evals {
			if e.Status == "pending" || e.Status == "blocked" {
				return false
			}
		}
		return true
	})
	evals, _, err := c.Jobs().Evaluations("big", nil)
	must.NoError(t, err)
	canceled := 0
	for _, e := range evals {
		if e.Status == "canceled" {
			canceled++
			must.StrContains(t, e.StatusDescription, "job stopped")
		}
	}
	must.Positive(t, canceled)
	allocs, _, err := c.Jobs().Allocations("big", true, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
}

func waitEvals(t *testing.T, c *api.Client, jobID string, cond func([]*api.Evaluation) bool) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.TestFunc(func() (bool, error) {
		evals, _, err := c.Jobs().Evaluations(jobID, nil)
		if err != nil {
			return false, err
		}
		var seen []string
		for _, e := range evals {
			seen = append(seen, e.ID[:8]+":"+e.Status)
		}
		return cond(evals), fmt.Errorf("evaluations of %s: %s", jobID, strings.Join(seen, ", "))
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))
}
