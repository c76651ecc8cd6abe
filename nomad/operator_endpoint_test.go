package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestOperator_SchedulerConfiguration(t *testing.T) {
	srv, mgmt := testACLServer(t, func(c *Config) { c.SchedulerAlgorithm = "spread" })
	get := func(token string) (*structs.SchedulerConfiguration, error) {
		var reply structs.SchedulerConfigurationResponse
		err := srv.Endpoints.Operator.SchedulerGetConfiguration(&structs.QueryOptions{AuthToken: token}, &reply)
		return reply.SchedulerConfig, err
	}
	set := func(token string, c structs.SchedulerConfiguration, cas bool) (*structs.SchedulerSetConfigurationResponse, error) {
		var reply structs.SchedulerSetConfigurationResponse
		err := srv.Endpoints.Operator.SchedulerSetConfiguration(&structs.SchedulerSetConfigRequest{Config: c, CAS: cas,
			WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
		return &reply, err
	}

	// Nothing stored yet: the server's default_scheduler_config answers, and is what the
	// scheduler uses.
	c, err := get(mgmt)
	must.NoError(t, err)
	must.Eq(t, "spread", c.SchedulerAlgorithm)
	must.Zero(t, c.ModifyIndex)
	must.Eq(t, "spread", srv.schedulerAlgorithm(srv.State(), "default"))

	reader := clientToken(t, srv, mgmt, "op-read", `operator { policy = "read" }`).SecretID
	_, err = get(reader)
	must.NoError(t, err)
	before := srv.State().LatestIndex()
	_, err = set(reader, structs.SchedulerConfiguration{SchedulerAlgorithm: "binpack"}, false)
	must.ErrorContains(t, err, "Permission denied: operator write required")
	must.Eq(t, before, srv.State().LatestIndex())
	_, err = set(mgmt, structs.SchedulerConfiguration{SchedulerAlgorithm: "random"}, false)
	must.ErrorContains(t, err, `invalid SchedulerAlgorithm "random"`)

	out, err := set(mgmt, structs.SchedulerConfiguration{SchedulerAlgorithm: "binpack"}, true)
	must.NoError(t, err)
	must.True(t, out.Updated)
	c, err = get(mgmt)
	must.NoError(t, err)
	must.Eq(t, "binpack", c.SchedulerAlgorithm)
	must.Eq(t, "binpack", srv.schedulerAlgorithm(srv.State(), "default"))

	out, err = set(mgmt, structs.SchedulerConfiguration{SchedulerAlgorithm: "spread", ModifyIndex: c.ModifyIndex - 1}, true)
	must.NoError(t, err)
	must.False(t, out.Updated)

	t.Run("a pool's own algorithm wins", func(t *testing.T) {
		var gr structs.GenericResponse
		must.NoError(t, srv.Endpoints.NodePool.UpsertNodePools(&structs.NodePoolUpsertRequest{
			NodePools:    []*structs.NodePool{{Name: "wide", SchedulerConfiguration: &structs.NodePoolSchedulerConfiguration{SchedulerAlgorithm: "spread"}}},
			WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &gr))
		must.Eq(t, "spread", srv.schedulerAlgorithm(srv.State(), "wide"))
		must.Eq(t, "binpack", srv.schedulerAlgorithm(srv.State(), "default"))
	})

	t.Run("reject job registration", func(t *testing.T) {
		_, err := set(mgmt, structs.SchedulerConfiguration{SchedulerAlgorithm: "binpack", RejectJobRegistration: true}, false)
		must.NoError(t, err)
		writer := clientToken(t, srv, mgmt, "writer", `namespace "default" { policy = "write" }`).SecretID
		var reply structs.JobRegisterResponse
		err = srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: mock.JobWithID("refused"),
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: writer}}, &reply)
		must.ErrorContains(t, err, "disabled by the scheduler configuration")
		must.Eq(t, 403, structs.ErrorCode(err))
		registerJob(t, srv, mgmt, mock.JobWithID("allowed"))
		count := int64(2)
		err = srv.Endpoints.Job.Scale(&structs.JobScaleRequest{JobID: "allowed", Count: &count,
			Target:       map[string]string{"Group": "web"},
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: writer}}, &reply)
		must.ErrorContains(t, err, "disabled by the scheduler configuration")
	})
}
