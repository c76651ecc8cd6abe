package structs

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestJob_ValidateUpdate(t *testing.T) {
	cases := []struct {
		name    string
		jobType string
		job     *api.UpdateStrategy
		group   *api.UpdateStrategy
		wantErr string // "" when valid
	}{
		{name: "defaults", job: api.DefaultUpdateStrategy()},
		{name: "canary with auto_promote", group: &api.UpdateStrategy{Canary: new(2), AutoPromote: new(true)}},
		{name: "negative max_parallel", group: &api.UpdateStrategy{MaxParallel: new(-1)},
			wantErr: `group "g": update: max_parallel must not be negative, got -1`},
		{name: "negative canary", group: &api.UpdateStrategy{Canary: new(-2)},
			wantErr: `update: canary must not be negative, got -2`},
		{name: "auto_promote without canary", group: &api.UpdateStrategy{AutoPromote: new(true), Canary: new(0)},
			wantErr: `update: auto_promote requires a canary count greater than zero`},
		{name: "job level errors name the job block", job: &api.UpdateStrategy{MaxParallel: new(-3)},
			wantErr: "update: max_parallel must not be negative, got -3"},
		{name: "negative min_healthy_time", group: &api.UpdateStrategy{MinHealthyTime: new(-time.Second)},
			wantErr: "min_healthy_time must not be negative"},
		{name: "negative progress_deadline", group: &api.UpdateStrategy{ProgressDeadline: new(-time.Second)},
			wantErr: "progress_deadline must not be negative"},
		{name: "min_healthy_time not below healthy_deadline",
			group:   &api.UpdateStrategy{MinHealthyTime: new(time.Minute), HealthyDeadline: new(time.Minute)},
			wantErr: "min_healthy_time (1m0s) must be less than healthy_deadline (1m0s)"},
		{name: "healthy_deadline not below progress_deadline",
			group:   &api.UpdateStrategy{HealthyDeadline: new(10 * time.Minute), ProgressDeadline: new(5 * time.Minute)},
			wantErr: "healthy_deadline (10m0s) must be less than progress_deadline (5m0s)"},
		{name: "progress_deadline 0 turns the check off",
			group: &api.UpdateStrategy{HealthyDeadline: new(10 * time.Minute), ProgressDeadline: new(time.Duration(0))}},
		{name: "unknown health_check", group: &api.UpdateStrategy{HealthCheck: new("pings")},
			wantErr: `health_check must be one of "checks", "task_states" or "manual", got "pings"`},
		{name: "batch job may not have one", jobType: JobTypeBatch, group: &api.UpdateStrategy{MaxParallel: new(2)},
			wantErr: `group "g": update: job type "batch" does not allow an update block`},
		{name: "system job canaries: a percentage of the feasible nodes", jobType: JobTypeSystem,
			group: &api.UpdateStrategy{Canary: new(25), MaxParallel: new(2)}},
		{name: "system job canaries over 100 percent", jobType: JobTypeSystem, group: &api.UpdateStrategy{Canary: new(150), MaxParallel: new(1)},
			wantErr: `group "g": update: canary is a percentage of the feasible nodes for a system job: 150 is over 100`},
		{name: "system job canaries need max_parallel", jobType: JobTypeSystem, group: &api.UpdateStrategy{Canary: new(10), MaxParallel: new(0)},
			wantErr: `group "g": update: canary needs max_parallel above 0 for a system job`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			if tc.jobType != "" {
				j.Type = tc.jobType
			}
			j.Update = tc.job
			j.TaskGroups[0].Update = tc.group
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// The client library's canonicalisation gives every service group upstream's defaults, the
// group's own values winning over the job's; the scheduler reads the group's block.
func TestJob_UpdateStrategyFor(t *testing.T) {
	in := &api.Job{ID: new("web"), Type: new(JobTypeService),
		Update: &api.UpdateStrategy{MaxParallel: new(3), Canary: new(1)},
		TaskGroups: []*api.TaskGroup{
			{Name: new("a"), Tasks: []*api.Task{{Name: "t", Driver: "mock_driver"}}},
			{Name: new("b"), Update: &api.UpdateStrategy{Canary: new(0), MaxParallel: new(0)}, Tasks: []*api.Task{{Name: "t", Driver: "mock_driver"}}},
		}}
	in.Canonicalize()
	j := JobFromAPI(in)
	a := j.UpdateStrategyFor(j.TaskGroups[0])
	must.NotNil(t, a)
	must.Eq(t, 3, *a.MaxParallel)
	must.Eq(t, 1, *a.Canary)
	must.Eq(t, 10*time.Second, *a.MinHealthyTime)
	must.Eq(t, 5*time.Minute, *a.HealthyDeadline)
	must.Eq(t, 10*time.Minute, *a.ProgressDeadline)
	must.Eq(t, "checks", *a.HealthCheck)
	must.Nil(t, j.UpdateStrategyFor(j.TaskGroups[1]), must.Sprint("max_parallel 0 updates all at once"))
	must.True(t, j.HasUpdateStrategy())
	j.Type = JobTypeBatch
	must.False(t, j.HasUpdateStrategy())

	// A system job is deployed only when it asks for canaries; otherwise it keeps its
	// staggered update.
	j.Type = JobTypeSystem
	must.NotNil(t, j.UpdateStrategyFor(j.TaskGroups[0]))
	j.TaskGroups[0].Update.Canary = new(0)
	must.Nil(t, j.UpdateStrategyFor(j.TaskGroups[0]))
}
