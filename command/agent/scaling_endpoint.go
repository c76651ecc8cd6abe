package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

var errScalingPolicyNotFound = structs.NewErrCode(http.StatusNotFound, "scaling policy not found")

func (s *HTTPServer) scalingPoliciesList(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	args := structs.ScalingPolicyListRequest{Job: q.Get("job"), Type: q.Get("type"), QueryOptions: queryOptions(r)}
	return read(s, w, "Scaling.ListPolicies", &args, func(reply *structs.ScalingPolicyListResponse) (any, error) {
		return nonNil(reply.Policies), nil
	})
}

func (s *HTTPServer) scalingPolicyRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ScalingPolicySpecificRequest{ID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "Scaling.GetPolicy", &args, func(reply *structs.SingleScalingPolicyResponse) (any, error) {
		if reply.Policy == nil {
			return nil, errScalingPolicyNotFound
		}
		return scalingPolicyToAPI(reply.Policy), nil
	})
}

func scalingPolicyToAPI(p *structs.ScalingPolicy) *api.ScalingPolicy {
	enabled, minCount := p.Enabled, p.Min
	return &api.ScalingPolicy{
		ID: p.ID, Type: p.Type, Namespace: p.Namespace, Target: p.Target,
		Min: &minCount, Max: p.Max, Policy: p.Policy, Enabled: &enabled,
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex,
	}
}
