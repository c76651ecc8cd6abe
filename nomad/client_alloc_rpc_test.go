package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestSecurity_ClientRPC_ForeignAllocations walks every client RPC that names an allocation
// (or a registration of one) with another node's allocation and with an ID nobody placed:
// each is refused before Raft, with a 403 for a write (404 for a registration, which names
// no allocation), the Raft index does not move, and the other node's records are as they
// were. A node whose RPC port is reachable cannot write about workloads it does not run.
func TestSecurity_ClientRPC_ForeignAllocations(t *testing.T) {
	srv := rpcServer(t, nil)
	sess := clientConn(t, srv)
	caller, victim := testNode("caller"), testNode("victim")
	must.NoError(t, registerOverConn(t, sess, caller, caller.SecretID))
	must.NoError(t, registerOverConn(t, clientConn(t, srv), victim, victim.SecretID))
	registerJob(t, srv, "", mock.Job())
	stored, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	const foreign, missing = "a-victim", "a-nobody-placed"
	testPlaceAllocs(t, srv, stored, &structs.Allocation{ID: foreign, Name: "web.web[0]", TaskGroup: "web", NodeID: victim.ID})
	victimSvc := svcOf(foreign, "api", 8080)
	must.NoError(t, upsertAs(srv, victim.ID, victim.SecretID, victimSvc))

	asCaller := structs.WriteRequest{AuthToken: caller.SecretID}
	rpcs := []struct {
		name   string
		method string
		args   func(allocID string) any
		reply  func() any
		// wantCode is the refusal for another node's allocation and for an unknown one.
		wantForeign, wantMissing int
	}{
		{
			name: "alloc update", method: "Alloc.UpdateFromClient",
			args: func(id string) any {
				return &structs.AllocUpdateRequest{NodeID: caller.ID, WriteRequest: asCaller,
					Alloc: []*structs.Allocation{{ID: id, ClientStatus: structs.AllocClientStatusFailed}}}
			},
			reply: func() any { return &structs.GenericResponse{} }, wantForeign: 403, wantMissing: 403,
		},
		{
			name: "alloc update hidden in a batch", method: "Alloc.UpdateFromClient",
			args: func(id string) any {
				return &structs.AllocUpdateRequest{NodeID: caller.ID, WriteRequest: asCaller,
					Alloc: []*structs.Allocation{
						{ID: "a-caller-unknown-0", ClientStatus: structs.AllocClientStatusRunning},
						{ID: id, ClientStatus: structs.AllocClientStatusComplete},
					}}
			},
			reply: func() any { return &structs.GenericResponse{} }, wantForeign: 403, wantMissing: 403,
		},
		{
			name: "service upsert", method: "ServiceRegistration.Upsert",
			args: func(id string) any {
				return &structs.ServiceRegistrationUpsertRequest{NodeID: caller.ID, WriteRequest: asCaller,
					Services: []*structs.ServiceRegistration{svcOf(id, "api", 9090)}}
			},
			reply: func() any { return &structs.GenericResponse{} }, wantForeign: 403, wantMissing: 403,
		},
		{
			name: "service delete", method: "ServiceRegistration.DeleteByID",
			args: func(id string) any {
				return &structs.ServiceRegistrationDeleteByIDRequest{NodeID: caller.ID, WriteRequest: asCaller,
					ID: svcOf(id, "api", 8080).ID}
			},
			reply: func() any { return &structs.GenericResponse{} }, wantForeign: 404, wantMissing: 404,
		},
		{
			// A read: an unknown allocation is answered with upstream's rejection (0 here),
			// another node's with a 403, and nothing is ever signed.
			name: "workload identities", method: "Alloc.SignIdentities",
			args: func(id string) any {
				return &structs.AllocIdentitiesRequest{NodeID: caller.ID, QueryOptions: structs.QueryOptions{AuthToken: caller.SecretID},
					Identities: []*structs.WorkloadIdentityRequest{{AllocID: id, TaskName: "server", IdentityName: "default"}}}
			},
			reply: func() any { return &structs.AllocIdentitiesResponse{} }, wantForeign: 403, wantMissing: 0,
		},
	}
	for _, rpc := range rpcs {
		for _, target := range []struct {
			name string
			id   string
			want int
		}{{"another node's", foreign, rpc.wantForeign}, {"nonexistent", missing, rpc.wantMissing}} {
			t.Run(rpc.name+" "+target.name, func(t *testing.T) {
				before := srv.raft.LastIndex()
				reply := rpc.reply()
				err := clientRPC(t, sess, rpc.method, rpc.args(target.id), reply)
				if target.want == 0 {
					must.NoError(t, err)
					ids := reply.(*structs.AllocIdentitiesResponse)
					must.SliceEmpty(t, ids.SignedIdentities)
					must.SliceLen(t, 1, ids.Rejections)
				} else {
					mustCode(t, target.want, err)
					must.StrNotContains(t, err.Error(), caller.SecretID)
				}
				must.Eq(t, before, srv.raft.LastIndex())
			})
		}
	}

	alloc, err := srv.State().AllocByID(nil, foreign)
	must.NoError(t, err)
	must.NotEq(t, structs.AllocClientStatusFailed, alloc.ClientStatus)
	must.NotEq(t, structs.AllocClientStatusComplete, alloc.ClientStatus)
	for _, id := range []string{missing, "a-caller-unknown-0"} {
		got, err := srv.State().AllocByID(nil, id)
		must.NoError(t, err)
		must.Nil(t, got)
	}
	reg, err := srv.State().ServiceRegistrationByID(nil, victimSvc.ID)
	must.NoError(t, err)
	must.NotNil(t, reg)
	must.Eq(t, victim.ID, reg.NodeID)
}
