package nomad

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestNodeEndpoint_Auth: with ACLs on, a node registers with a token that has node write (or
// as the agent's own client), then authenticates with its secret; reads need node read and
// never show the secret; a node reports only on its own allocations.
func TestNodeEndpoint_Auth(t *testing.T) {
	srv, root := testACLServer(t, func(c *Config) { c.NumSchedulers = 1 })
	reader := clientToken(t, srv, root, "node-reader", `node { policy = "read" }`)
	writer := clientToken(t, srv, root, "node-writer", `node { policy = "write" }`)
	jobs := clientToken(t, srv, root, "jobs", `namespace "default" { policy = "write" }`)

	register := func(node *structs.Node, token string) error {
		var reply structs.NodeUpdateResponse
		return srv.Endpoints.Node.Register(&structs.NodeRegisterRequest{Node: node, WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
	}
	heartbeat := func(nodeID, token string) error {
		var reply structs.NodeUpdateResponse
		return srv.Endpoints.Node.UpdateStatus(&structs.NodeUpdateStatusRequest{
			NodeID: nodeID, Status: structs.NodeStatusReady, WriteRequest: structs.WriteRequest{AuthToken: token},
		}, &reply)
	}

	mustCode := func(code int, err error) {
		t.Helper()
		must.Error(t, err)
		must.Eq(t, code, structs.ErrorCode(err), must.Sprintf("error: %v", err))
	}
	mustCode(403, register(testNode("n1"), ""))
	mustCode(403, register(testNode("n1"), "secret-n1"))
	mustCode(403, register(testNode("n1"), reader.SecretID))
	mustCode(403, register(testNode("n1"), jobs.SecretID))
	must.NoError(t, register(testNode("n1"), writer.SecretID))

	// The agent's own client is trusted with the secret it registered.
	srv.TrustLocalNode("secret-n2")
	must.NoError(t, register(testNode("n2"), "secret-n2"))

	must.NoError(t, heartbeat("n1", "secret-n1"))
	mustCode(403, heartbeat("n1", "secret-n3"))
	mustCode(404, heartbeat("nope", writer.SecretID))
	mustCode(400, register(&structs.Node{ID: "n3", SecretID: "secret-n1", Name: "n3", Datacenter: "dc1"}, writer.SecretID))

	var one structs.SingleNodeResponse
	mustCode(403, srv.Endpoints.Node.GetNode(&structs.NodeSpecificRequest{NodeID: "n1", QueryOptions: structs.QueryOptions{AuthToken: jobs.SecretID}}, &one))
	must.NoError(t, srv.Endpoints.Node.GetNode(&structs.NodeSpecificRequest{NodeID: "n1", QueryOptions: structs.QueryOptions{AuthToken: reader.SecretID}}, &one))
	must.Eq(t, "n1", one.Node.ID)
	must.Eq(t, "", one.Node.SecretID)
	var list structs.NodeListResponse
	must.NoError(t, srv.Endpoints.Node.List(&structs.NodeListRequest{QueryOptions: structs.QueryOptions{AuthToken: reader.SecretID}}, &list))
	must.Len(t, 2, list.Nodes)

	// An allocation placed on n1 can be reported by n1 only.
	registerJob(t, srv, root, mock.Job())
	waitFor(t, 5*time.Second, func() bool { return len(liveAllocs(t, srv, "web")) == 1 })
	alloc := liveAllocs(t, srv, "web")[0]
	other := map[string]string{"n1": "n2", "n2": "n1"}[alloc.NodeID]
	report := func(nodeID, token string) error {
		var reply structs.GenericResponse
		return srv.Endpoints.Alloc.UpdateFromClient(&structs.AllocUpdateRequest{
			NodeID: nodeID, Alloc: []*structs.Allocation{{ID: alloc.ID, ClientStatus: structs.AllocClientStatusRunning}},
			WriteRequest: structs.WriteRequest{AuthToken: token},
		}, &reply)
	}
	mustCode(403, report(alloc.NodeID, "secret-"+other))
	mustCode(403, report(other, "secret-"+other))
	mustCode(403, report(alloc.NodeID, reader.SecretID))
	must.NoError(t, report(alloc.NodeID, "secret-"+alloc.NodeID))
	got, err := srv.State().AllocByID(nil, alloc.ID)
	must.NoError(t, err)
	must.Eq(t, structs.AllocClientStatusRunning, got.ClientStatus)

	// The client reads its allocations with its secret; an operator with node read sees
	// those of the namespaces where it may read jobs.
	var allocs structs.NodeAllocsResponse
	must.NoError(t, srv.Endpoints.Node.GetAllocs(&structs.NodeSpecificRequest{NodeID: alloc.NodeID, QueryOptions: structs.QueryOptions{AuthToken: "secret-" + alloc.NodeID}}, &allocs))
	must.Len(t, 1, allocs.Allocs)
	must.NoError(t, srv.Endpoints.Node.GetAllocs(&structs.NodeSpecificRequest{NodeID: alloc.NodeID, QueryOptions: structs.QueryOptions{AuthToken: reader.SecretID}}, &allocs))
	must.SliceEmpty(t, allocs.Allocs)

	// After a purge the allocation lives on in the purge record: its own node may still
	// report its end, another node may not.
	var dereg structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "web", Purge: true,
		WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace, AuthToken: root}}, &dereg))
	// The worker finishes the purge's evaluation first: the index below must move for this
	// test's writes only.
	waitFor(t, 5*time.Second, func() bool {
		e, _ := srv.State().EvalByID(nil, dereg.EvalID)
		return e != nil && e.Status == structs.EvalStatusComplete
	})
	before := srv.raft.LastIndex()
	mustCode(403, report(other, "secret-"+other))
	must.Eq(t, before, srv.raft.LastIndex())
	must.NoError(t, report(alloc.NodeID, "secret-"+alloc.NodeID))
	rec, err := srv.State().PurgeRecordByAllocID(alloc.ID)
	must.NoError(t, err)
	must.NotNil(t, rec)
	must.Eq(t, structs.AllocClientStatusRunning, rec.Allocations[0].ClientStatus)
	must.Greater(t, before, rec.ModifyIndex)
}
