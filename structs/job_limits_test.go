package structs_test

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/shoenig/test/must"
)

// nested returns a free-form value depth levels deep: maps inside lists inside maps, the
// shape HCL blocks in task config decode to.
func nested(depth int) any {
	var v any = "leaf"
	for i := 0; i < depth; i++ {
		if i%2 == 0 {
			v = map[string]any{"a": v}
		} else {
			v = []any{v}
		}
	}
	return v
}

// A job whose task config nests past the limit must be refused by validation whatever
// path it came in by (the msgpack log codec fails at 1,024 levels and bricks the server).
func TestSecurity_JobValidateFreeformDepth(t *testing.T) {
	cases := []struct {
		name  string
		depth int
		want  string
	}{
		{name: "at the limit", depth: 127},
		{name: "over the limit", depth: 200,
			want: "job.TaskGroups[0].Tasks[0].Config nests deeper than 128 levels"},
		{name: "as the finding", depth: 1030,
			want: "job.TaskGroups[0].Tasks[0].Config nests deeper than 128 levels"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := mock.Job()
			job.TaskGroups[0].Tasks[0].Config["deep"] = nested(tc.depth)
			err := job.Validate()
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
		})
	}

	t.Run("scaling policy", func(t *testing.T) {
		job := mock.Job()
		job.TaskGroups[0].Scaling = &api.ScalingPolicy{Policy: map[string]any{"x": nested(300)}}
		must.ErrorContains(t, job.Validate(), "job.TaskGroups[0].Scaling.Policy nests deeper than 128 levels")
	})
}
