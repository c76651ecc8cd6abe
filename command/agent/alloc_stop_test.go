package agent

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestAllocStop_ThroughOfficialClient stops a running allocation: it is marked to migrate (and
// to reschedule or skip its shutdown delay when asked), an evaluation replaces it, and the
// job ends with one running allocation again.
func TestAllocStop_ThroughOfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := testJob("web")
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	first := allocsIn(t, c, "web", map[string]int{"running": 1})[0]

	resp, err := c.Allocations().Stop(&api.Allocation{ID: first.ID}, &api.QueryOptions{
		Params: map[string]string{"reschedule": "true", "no_shutdown_delay": "true"},
	})
	must.NoError(t, err)
	must.UUIDv4(t, resp.EvalID)
	must.Positive(t, resp.LastIndex)

	stopped, _, err := c.Allocations().Info(first.ID, nil)
	must.NoError(t, err)
	must.True(t, stopped.DesiredTransition.ShouldMigrate())
	must.True(t, stopped.DesiredTransition.ShouldReschedule())
	must.True(t, stopped.DesiredTransition.ShouldIgnoreShutdownDelay())
	eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
	must.NoError(t, err)
	must.Eq(t, "alloc-stop", eval.TriggeredBy)

	// The old allocation stops, a new one runs.
	allocs := allocsIn(t, c, "web", map[string]int{"running": 1, "complete": 1})
	for _, a := range allocs {
		if a.ID == first.ID {
			must.Eq(t, "stop", a.DesiredStatus)
		}
	}

	_, err = c.Allocations().Stop(&api.Allocation{ID: "no-such-alloc"}, nil)
	must.ErrorContains(t, err, "404")
}

// TestJobStop_NoShutdownDelay: job stop -no-shutdown-delay (?no_shutdown_delay=true on the
// deregister) marks the job's allocations, so their client kills the task at once rather
// than after its 60s shutdown_delay.
func TestJobStop_NoShutdownDelay(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := testJob("web")
	job.TaskGroups[0].Tasks[0].ShutdownDelay = time.Minute
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	first := allocsIn(t, c, "web", map[string]int{"running": 1})[0]

	_, _, err = c.Jobs().DeregisterOpts("web", &api.DeregisterOptions{NoShutdownDelay: true}, nil)
	must.NoError(t, err)
	allocsIn(t, c, "web", map[string]int{"complete": 1}) // within 20s: the minute was skipped
	stopped, _, err := c.Allocations().Info(first.ID, nil)
	must.NoError(t, err)
	must.True(t, stopped.DesiredTransition.ShouldIgnoreShutdownDelay())
	for _, e := range stopped.TaskStates["sleep"].Events {
		must.NotEq(t, "Waiting for shutdown delay", e.Type)
	}
}
