package agent

import (
	"net/http"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) nodePoolJobs(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodePoolJobsRequest{Name: r.PathValue("name"), QueryOptions: queryOptions(r)}
	return read(s, w, "NodePool.ListJobs", &args, func(reply *structs.JobListResponse) (any, error) {
		return nonNil(reply.Jobs), nil
	})
}

func (s *HTTPServer) nodePoolNodes(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodePoolNodesRequest{Name: r.PathValue("name"), QueryOptions: queryOptions(r)}
	return read(s, w, "NodePool.ListNodes", &args, func(reply *structs.NodeListResponse) (any, error) {
		return nonNil(reply.Nodes), nil
	})
}

func (s *HTTPServer) nodePoolList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodePoolListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "NodePool.List", &args, func(reply *structs.NodePoolListResponse) (any, error) {
		out := make([]*api.NodePool, 0, len(reply.NodePools))
		for _, p := range reply.NodePools {
			out = append(out, nodePoolToAPI(p))
		}
		return out, nil
	})
}

func (s *HTTPServer) nodePoolRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodePoolSpecificRequest{Name: r.PathValue("name"), QueryOptions: queryOptions(r)}
	return read(s, w, "NodePool.GetNodePool", &args, func(reply *structs.SingleNodePoolResponse) (any, error) {
		if reply.NodePool == nil {
			return nil, structs.NotFound(structs.ErrNodePoolNotFound)
		}
		return nodePoolToAPI(reply.NodePool), nil
	})
}

func (s *HTTPServer) nodePoolUpsert(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.NodePool
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if err := keyFromPath(r, "name", &body.Name, structs.BadRequest("invalid Name %q: does not match the request path %q", body.Name, r.PathValue("name"))); err != nil {
		return nil, err
	}
	pool := &structs.NodePool{
		Name: body.Name, Description: body.Description, Meta: body.Meta, NodeIdentityTTL: body.NodeIdentityTTL,
	}
	if sc := body.SchedulerConfiguration; sc != nil {
		pool.SchedulerConfiguration = &structs.NodePoolSchedulerConfiguration{
			SchedulerAlgorithm: string(sc.SchedulerAlgorithm), MemoryOversubscriptionEnabled: sc.MemoryOversubscriptionEnabled,
		}
	}
	args := structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{pool}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "NodePool.UpsertNodePools", &args)
}

func (s *HTTPServer) nodePoolDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.NodePoolDeleteRequest{Names: []string{r.PathValue("name")}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "NodePool.DeleteNodePools", &args)
}

func nodePoolToAPI(p *structs.NodePool) *api.NodePool {
	out := &api.NodePool{
		Name: p.Name, Description: p.Description, Meta: p.Meta, NodeIdentityTTL: p.NodeIdentityTTL,
		CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex,
	}
	if sc := p.SchedulerConfiguration; sc != nil {
		out.SchedulerConfiguration = &api.NodePoolSchedulerConfiguration{
			SchedulerAlgorithm: api.SchedulerAlgorithm(sc.SchedulerAlgorithm), MemoryOversubscriptionEnabled: sc.MemoryOversubscriptionEnabled,
		}
	}
	return out
}
