package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func periodicJob(id, spec string) *api.Job {
	job := testJob(id)
	job.Type = new("batch")
	job.Periodic = &api.PeriodicConfig{Spec: new(spec), TimeZone: new("UTC")}
	return job
}

func TestJobPlan_NextPeriodicLaunch(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	cases := []struct {
		name     string
		tz       string
		wantHour int
	}{
		{name: "UTC", tz: "UTC", wantHour: 3},
		{name: "time zone", tz: "Asia/Tokyo", wantHour: 18}, // 03:00 in Tokyo is 18:00 UTC
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := periodicJob("nightly", "0 3 * * *")
			job.Periodic.TimeZone = new(tc.tz)
			before := time.Now()
			resp, _, err := c.Jobs().Plan(job, false, nil)
			must.NoError(t, err)
			next := resp.NextPeriodicLaunch.UTC()
			must.True(t, next.After(before), must.Sprintf("next launch %s not after %s", next, before))
			must.True(t, next.Before(before.Add(24*time.Hour+time.Minute)))
			must.Eq(t, tc.wantHour, next.Hour())
			must.Eq(t, 0, next.Minute())
		})
	}
	// A job that is not periodic has none.
	resp, _, err := c.Jobs().Plan(testJob("web"), false, nil)
	must.NoError(t, err)
	must.True(t, resp.NextPeriodicLaunch.IsZero())
}

// TestPeriodic_LeaderLaunches: the leader's dispatcher launches a registered periodic job's
// children on its schedule (every second here), each with its evaluation; the parent itself
// is never evaluated or placed, and is running until stopped.
func TestPeriodic_LeaderLaunches(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, _, err := c.Jobs().Register(periodicJob("tick", "* * * * * * *"), nil)
	must.NoError(t, err)

	var children []*api.JobListStub
	eventually(t, 20*time.Second, "two children of tick", func() (bool, string) {
		children, _, err = c.Jobs().PrefixList("tick/periodic-")
		if err != nil {
			return false, err.Error()
		}
		return len(children) >= 2, ""
	})
	for _, child := range children {
		must.Eq(t, "tick", child.ParentID)
		must.StrHasPrefix(t, "tick/periodic-", child.ID)
		evals, _, err := c.Jobs().Evaluations(child.ID, nil)
		must.NoError(t, err)
		must.SliceNotEmpty(t, evals)
		must.Eq(t, "periodic-job", evals[0].TriggeredBy)
	}
	parent, _, err := c.Jobs().Info("tick", nil)
	must.NoError(t, err)
	must.Eq(t, "running", *parent.Status)
	evals, _, err := c.Jobs().Evaluations("tick", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, evals)

	// The launch record is not in the API, but it is in the state (and so in snapshots).
	launch, err := ta.Server().State().PeriodicLaunchByID(nil, "default", "tick")
	must.NoError(t, err)
	must.NotNil(t, launch)
	must.True(t, strings.HasPrefix(children[0].ID, "tick/periodic-"))
}
