package agent

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestNodePoolEndpoint(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	pools := c.NodePools()

	_, err := pools.Register(&api.NodePool{Name: "gpu", Description: "GPUs", Meta: map[string]string{"a": "b"}, NodeIdentityTTL: 2 * time.Hour,
		SchedulerConfiguration: &api.NodePoolSchedulerConfiguration{SchedulerAlgorithm: api.SchedulerAlgorithmSpread}}, nil)
	must.NoError(t, err)
	got, _, err := pools.Info("gpu", nil)
	must.NoError(t, err)
	must.Eq(t, "GPUs", got.Description)
	must.Eq(t, 2*time.Hour, got.NodeIdentityTTL)
	must.Eq(t, api.SchedulerAlgorithmSpread, got.SchedulerConfiguration.SchedulerAlgorithm)
	must.Positive(t, got.CreateIndex)

	list, _, err := pools.List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 3, list)

	cases := []struct {
		name    string
		do      func() error
		wantErr string
	}{
		{name: "update the default pool", do: func() error {
			_, err := pools.Register(&api.NodePool{Name: "default", Description: "x"}, nil)
			return err
		}, wantErr: `400 (modifying node pool "default" is not allowed)`},
		{name: "delete the all pool", do: func() error { _, err := pools.Delete("all", nil); return err },
			wantErr: `400 (deleting built-in node pool "all" is not allowed)`},
		{name: "bad name", do: func() error {
			_, err := pools.Register(&api.NodePool{Name: "no spaces"}, nil)
			return err
		}, wantErr: `400 (invalid Name "no spaces"`},
		{name: "bad algorithm", do: func() error {
			_, err := pools.Register(&api.NodePool{Name: "x", SchedulerConfiguration: &api.NodePoolSchedulerConfiguration{SchedulerAlgorithm: "random"}}, nil)
			return err
		}, wantErr: "400 (invalid SchedulerConfiguration.SchedulerAlgorithm"},
		{name: "name differs from the path", do: func() error {
			_, err := c.Raw().Write("/v1/node/pool/a", &api.NodePool{Name: "b"}, nil, nil)
			return err
		}, wantErr: "does not match the request path"},
		{name: "delete a missing pool", do: func() error { _, err := pools.Delete("nope", nil); return err },
			wantErr: "404 (node pool not found)"},
		{name: "read a missing pool", do: func() error { _, _, err := pools.Info("nope", nil); return err },
			wantErr: "404 (node pool not found)"},
		{name: "a job in a pool that does not exist", do: func() error {
			job := testJob("lost-job")
			pool := "nowhere"
			job.NodePool = &pool
			_, _, err := c.Jobs().Register(job, nil)
			return err
		}, wantErr: `400 (job "lost-job" is in nonexistent node pool "nowhere")`},
		{name: "delete a pool a job uses", do: func() error {
			job := testJob("gpu-job")
			pool := "gpu"
			job.NodePool = &pool
			if _, _, err := c.Jobs().Register(job, nil); err != nil {
				return err
			}
			_, err := pools.Delete("gpu", nil)
			return err
		}, wantErr: `400 (node pool "gpu" has non-terminal jobs in regions: [global])`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			must.ErrorContains(t, err, tc.wantErr)
		})
	}

	t.Run("members", func(t *testing.T) {
		jobs, _, err := pools.ListJobs("gpu", nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, jobs)
		must.Eq(t, "gpu-job", jobs[0].ID)
		jobs, _, err = pools.ListJobs("default", nil)
		must.NoError(t, err)
		must.SliceEmpty(t, jobs)
		nodes, _, err := pools.ListNodes("all", nil)
		must.NoError(t, err)
		must.SliceEmpty(t, nodes)
		_, _, err = pools.ListNodes("nope", nil)
		must.ErrorContains(t, err, "404 (node pool not found)")
	})
}
