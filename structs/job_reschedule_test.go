package structs

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestCheckReschedule(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	cases := []struct {
		name   string
		typ    string
		policy *api.ReschedulePolicy
		want   string
	}{
		{name: "service default", typ: JobTypeService, policy: api.NewDefaultReschedulePolicy(JobTypeService)},
		{name: "batch default", typ: JobTypeBatch, policy: api.NewDefaultReschedulePolicy(JobTypeBatch)},
		{name: "off", typ: JobTypeService, policy: &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false), DelayFunction: new("bogus")}},
		{name: "unknown function", typ: JobTypeService, policy: &api.ReschedulePolicy{Unlimited: new(true), Delay: d(time.Minute), MaxDelay: d(time.Hour), DelayFunction: new("linear")},
			want: `group "g": reschedule: delay_function "linear" must be one of constant, exponential, fibonacci`},
		{name: "delay too short", typ: JobTypeService, policy: &api.ReschedulePolicy{Unlimited: new(true), Delay: d(time.Second), DelayFunction: new("constant")},
			want: `group "g": reschedule: delay (1s) must be at least 5s`},
		{name: "max below delay", typ: JobTypeService, policy: &api.ReschedulePolicy{Unlimited: new(true), Delay: d(time.Minute), MaxDelay: d(time.Second), DelayFunction: new("exponential")},
			want: `group "g": reschedule: max_delay (1s) must not be less than delay (1m0s)`},
		{name: "attempts with unlimited", typ: JobTypeService, policy: &api.ReschedulePolicy{Attempts: new(3), Unlimited: new(true), Delay: d(time.Minute), DelayFunction: new("constant")},
			want: `group "g": reschedule: attempts (3) must be 0 with unlimited`},
		{name: "interval too short", typ: JobTypeBatch, policy: &api.ReschedulePolicy{Attempts: new(3), Interval: d(time.Minute), Delay: d(time.Minute), DelayFunction: new("constant")},
			want: `group "g": reschedule: interval (1m0s) is too short for 3 attempts 1m0s apart`},
		{name: "system job", typ: JobTypeSystem, policy: api.NewDefaultReschedulePolicy(JobTypeService),
			want: `group "g": reschedule: job type "system" does not allow a reschedule block`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := &Job{Type: tc.typ, TaskGroups: []*api.TaskGroup{{Name: new("g"), ReschedulePolicy: tc.policy}}}
			msgs := checkReschedule(j)
			if tc.want == "" {
				must.SliceEmpty(t, msgs)
				return
			}
			must.SliceContains(t, msgs, tc.want)
		})
	}
}
