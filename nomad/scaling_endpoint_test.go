package nomad

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestScaling_PolicyIDsAreTheLeaders(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	max := int64(10)
	job := mock.JobWithID("scaled")
	job.TaskGroups[0].Scaling = &api.ScalingPolicy{Max: &max}
	registerJob(t, srv, mgmt, job)

	policies, err := srv.State().ScalingPolicies(nil, "default", "scaled")
	must.NoError(t, err)
	must.SliceLen(t, 1, policies)
	id := policies[0].ID
	must.UUIDv4(t, id)

	// An update keeps the ID; an ID in the submitted job is not taken.
	other := mock.JobWithID("other")
	other.TaskGroups[0].Scaling = &api.ScalingPolicy{Max: &max, ID: id}
	registerJob(t, srv, mgmt, other)
	again := mock.JobWithID("scaled")
	max2 := int64(20)
	again.TaskGroups[0].Scaling = &api.ScalingPolicy{Max: &max2, ID: "chosen-by-caller"}
	registerJob(t, srv, mgmt, again)
	policies, err = srv.State().ScalingPolicies(nil, "default", "scaled")
	must.NoError(t, err)
	must.SliceLen(t, 1, policies)
	must.Eq(t, id, policies[0].ID)
	must.Eq(t, int64(20), *policies[0].Max)
	others, err := srv.State().ScalingPolicies(nil, "default", "other")
	must.NoError(t, err)
	must.SliceLen(t, 1, others)
	must.NotEq(t, id, others[0].ID)

	reader := clientToken(t, srv, mgmt, "scaler", `namespace "default" { policy = "scale" }`).SecretID
	outsider := clientToken(t, srv, mgmt, "outsider", `namespace "other" { policy = "write" }`).SecretID
	var list structs.ScalingPolicyListResponse
	must.NoError(t, srv.Endpoints.Scaling.ListPolicies(&structs.ScalingPolicyListRequest{
		QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: reader}}, &list))
	must.SliceLen(t, 2, list.Policies)
	err = srv.Endpoints.Scaling.ListPolicies(&structs.ScalingPolicyListRequest{
		QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: outsider}}, &list)
	must.ErrorContains(t, err, "Permission denied: list-scaling-policies")
	var one structs.SingleScalingPolicyResponse
	err = srv.Endpoints.Scaling.GetPolicy(&structs.ScalingPolicySpecificRequest{ID: id,
		QueryOptions: structs.QueryOptions{Namespace: "other", AuthToken: outsider}}, &one)
	must.ErrorContains(t, err, `read-scaling-policy capability required in namespace "default"`)

	t.Run("validation", func(t *testing.T) {
		bad := mock.JobWithID("bad")
		minC := int64(5)
		bad.TaskGroups[0].Scaling = &api.ScalingPolicy{Min: &minC, Max: &max}
		var reply structs.JobRegisterResponse
		err := srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: bad,
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &reply)
		must.ErrorContains(t, err, `group "web": scaling: count 1 is less than min 5`)
		bad.TaskGroups[0].Scaling = &api.ScalingPolicy{}
		err = srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: bad,
			WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: mgmt}}, &reply)
		must.ErrorContains(t, err, "max must be specified")
	})
}
