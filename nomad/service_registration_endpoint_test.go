package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// serviceTestServer is an ACL server with nodes n1 and n2, job web and allocation a1 on n1
// and a2 on n2 (no scheduler runs).
func serviceTestServer(t *testing.T) (*Server, string) {
	t.Helper()
	srv, root := testACLServer(t, nil)
	for _, id := range []string{"n1", "n2"} {
		srv.TrustLocalNode("secret-" + id)
		registerNode(t, srv, testNode(id), "secret-"+id)
	}
	registerJob(t, srv, root, mock.Job())
	stored, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	testPlaceAllocs(t, srv, stored,
		&structs.Allocation{ID: "a1", Name: "web.web[0]", TaskGroup: "web", NodeID: "n1"},
		&structs.Allocation{ID: "a2", Name: "web.web[1]", TaskGroup: "web", NodeID: "n2"})
	return srv, root
}

func svcOf(allocID, name string, port int) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{
		ID: "_nomad-task-" + allocID + "-web-" + name + "-http", ServiceName: name, AllocID: allocID,
		Tags: []string{"v1"}, Address: "10.0.0.1", Port: port,
	}
}

func upsertAs(srv *Server, nodeID, token string, svcs ...*structs.ServiceRegistration) error {
	var reply structs.GenericResponse
	return srv.Endpoints.Services.Upsert(&structs.ServiceRegistrationUpsertRequest{
		NodeID: nodeID, Services: svcs, WriteRequest: structs.WriteRequest{AuthToken: token},
	}, &reply)
}

func assertCode(t *testing.T, code int, err error) {
	t.Helper()
	must.Error(t, err)
	must.Eq(t, code, structs.ErrorCode(err), must.Sprintf("error: %v", err))
}

// Only a node registers services, with its own secret, and only for allocations placed on
// itself; Namespace, JobID and Datacenter come from the servers' records. Nothing is
// written for a refused request.
func TestServiceRegistrationEndpoint_UpsertAuth(t *testing.T) {
	srv, root := serviceTestServer(t)
	writer := clientToken(t, srv, root, "writer", `namespace "default" { policy = "write" }`+"\n"+`node { policy = "write" }`)

	cases := []struct {
		name   string
		nodeID string
		token  string
		svc    *structs.ServiceRegistration
		code   int
	}{
		{name: "no secret", nodeID: "n1", token: "", svc: svcOf("a1", "api", 1), code: 403},
		{name: "management token", nodeID: "n1", token: root, svc: svcOf("a1", "api", 1), code: 403},
		{name: "node write token", nodeID: "n1", token: writer.SecretID, svc: svcOf("a1", "api", 1), code: 403},
		{name: "another node's secret", nodeID: "n1", token: "secret-n2", svc: svcOf("a1", "api", 1), code: 403},
		{name: "another node's allocation", nodeID: "n2", token: "secret-n2", svc: svcOf("a1", "api", 1), code: 403},
		{name: "naming another node", nodeID: "n1", token: "secret-n1",
			svc: func() *structs.ServiceRegistration { s := svcOf("a1", "api", 1); s.NodeID = "n2"; return s }(), code: 403},
		{name: "unknown allocation", nodeID: "n1", token: "secret-n1", svc: svcOf("a9", "api", 1), code: 403},
		{name: "missing node ID", nodeID: "", token: "secret-n1", svc: svcOf("a1", "api", 1), code: 400},
		{name: "bad port", nodeID: "n1", token: "secret-n1", svc: svcOf("a1", "api", 70000), code: 400},
		{name: "ID of another allocation", nodeID: "n1", token: "secret-n1",
			svc: func() *structs.ServiceRegistration {
				s := svcOf("a1", "api", 1)
				s.ID = "_nomad-task-a2-web-api-http"
				return s
			}(), code: 400},
		{name: "name with a slash", nodeID: "n1", token: "secret-n1", svc: svcOf("a1", "a/b", 1), code: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.raft.LastIndex()
			assertCode(t, tc.code, upsertAs(srv, tc.nodeID, tc.token, tc.svc))
			must.Eq(t, before, srv.raft.LastIndex())
		})
	}

	t.Run("own allocation", func(t *testing.T) {
		svc := svcOf("a1", "api", 8080)
		svc.Namespace, svc.JobID, svc.Datacenter = "forged", "forged", "forged"
		must.NoError(t, upsertAs(srv, "n1", "secret-n1", svc))
		got, err := srv.State().ServiceRegistrationByID(nil, svc.ID)
		must.NoError(t, err)
		must.NotNil(t, got)
		must.Eq(t, structs.DefaultNamespace, got.Namespace)
		must.Eq(t, "web", got.JobID)
		must.Eq(t, "dc1", got.Datacenter)
		must.Eq(t, "n1", got.NodeID)
		must.Eq(t, 8080, got.Port)
	})
}

func TestServiceRegistrationEndpoint_DeleteByID(t *testing.T) {
	srv, root := serviceTestServer(t)
	reader := clientToken(t, srv, root, "reader", `namespace "default" { policy = "read" }`)
	submitter := clientToken(t, srv, root, "submitter", `namespace "default" { capabilities = ["submit-job"] }`)
	deleter := clientToken(t, srv, root, "deleter", `namespace "default" { capabilities = ["delete-service-registration"] }`)
	del := func(req structs.ServiceRegistrationDeleteByIDRequest) error {
		var reply structs.GenericResponse
		return srv.Endpoints.Services.DeleteByID(&req, &reply)
	}
	id := svcOf("a1", "api", 1).ID
	register := func() { must.NoError(t, upsertAs(srv, "n1", "secret-n1", svcOf("a1", "api", 1))) }
	register()

	wr := func(token string) structs.WriteRequest { return structs.WriteRequest{AuthToken: token} }
	refused := []struct {
		name string
		req  structs.ServiceRegistrationDeleteByIDRequest
		code int
	}{
		{name: "anonymous", req: structs.ServiceRegistrationDeleteByIDRequest{ID: id, WriteRequest: wr("")}, code: 403},
		{name: "read-job only", req: structs.ServiceRegistrationDeleteByIDRequest{ID: id, WriteRequest: wr(reader.SecretID)}, code: 403},
		{name: "another node", req: structs.ServiceRegistrationDeleteByIDRequest{ID: id, NodeID: "n2", WriteRequest: wr("secret-n2")}, code: 404},
		{name: "node without its secret", req: structs.ServiceRegistrationDeleteByIDRequest{ID: id, NodeID: "n1", WriteRequest: wr("secret-n2")}, code: 403},
		{name: "wrong service name", req: structs.ServiceRegistrationDeleteByIDRequest{ID: id, ServiceName: "db", WriteRequest: wr(root)}, code: 404},
		{name: "unknown ID", req: structs.ServiceRegistrationDeleteByIDRequest{ID: "nope", WriteRequest: wr(root)}, code: 404},
		{name: "missing ID", req: structs.ServiceRegistrationDeleteByIDRequest{WriteRequest: wr(root)}, code: 400},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.raft.LastIndex()
			assertCode(t, tc.code, del(tc.req))
			must.Eq(t, before, srv.raft.LastIndex())
		})
	}
	allowed := []struct {
		name string
		req  structs.ServiceRegistrationDeleteByIDRequest
	}{
		{name: "submit-job", req: structs.ServiceRegistrationDeleteByIDRequest{ID: id, ServiceName: "api", WriteRequest: wr(submitter.SecretID)}},
		{name: "delete-service-registration", req: structs.ServiceRegistrationDeleteByIDRequest{ID: id, WriteRequest: wr(deleter.SecretID)}},
		{name: "its own node", req: structs.ServiceRegistrationDeleteByIDRequest{ID: id, NodeID: "n1", WriteRequest: wr("secret-n1")}},
	}
	for _, tc := range allowed {
		t.Run(tc.name, func(t *testing.T) {
			register()
			must.NoError(t, del(tc.req))
			got, err := srv.State().ServiceRegistrationByID(nil, id)
			must.NoError(t, err)
			must.Nil(t, got)
		})
	}
}

func TestServiceRegistrationEndpoint_Reads(t *testing.T) {
	srv, root := serviceTestServer(t)
	reader := clientToken(t, srv, root, "reader", `namespace "default" { policy = "read" }`)
	other := clientToken(t, srv, root, "other", `namespace "other" { policy = "read" }`)
	must.NoError(t, upsertAs(srv, "n1", "secret-n1", svcOf("a1", "api", 1), svcOf("a1", "db", 3)))
	api2 := svcOf("a2", "api", 2)
	api2.Tags = []string{"v2", "v1"}
	must.NoError(t, upsertAs(srv, "n2", "secret-n2", api2))
	q := func(token string) structs.QueryOptions { return structs.QueryOptions{AuthToken: token} }

	var list structs.ServiceRegistrationListResponse
	assertCode(t, 403, srv.Endpoints.Services.List(&structs.ServiceRegistrationListRequest{QueryOptions: q(other.SecretID)}, &list))
	must.NoError(t, srv.Endpoints.Services.List(&structs.ServiceRegistrationListRequest{QueryOptions: q(reader.SecretID)}, &list))
	must.Eq(t, []*structs.ServiceRegistrationListStub{{Namespace: "default", Services: []*structs.ServiceRegistrationStub{
		{ServiceName: "api", Tags: []string{"v1", "v2"}}, {ServiceName: "db", Tags: []string{"v1"}},
	}}}, list.Services)
	// "*" lists only the namespaces the token may read.
	must.NoError(t, srv.Endpoints.Services.List(&structs.ServiceRegistrationListRequest{
		QueryOptions: structs.QueryOptions{AuthToken: other.SecretID, Namespace: "*"}}, &list))
	must.SliceEmpty(t, list.Services)

	var got structs.ServiceRegistrationsResponse
	byName := func(choose string) error {
		return srv.Endpoints.Services.GetService(&structs.ServiceRegistrationByNameRequest{ServiceName: "api", Choose: choose, QueryOptions: q(reader.SecretID)}, &got)
	}
	must.NoError(t, byName(""))
	must.Len(t, 2, got.Services)
	must.NoError(t, byName("1|client-a"))
	must.Len(t, 1, got.Services)
	first := got.Services[0].ID
	must.NoError(t, byName("1|client-a"))
	must.Eq(t, first, got.Services[0].ID)
	for _, bad := range []string{"x|k", "0|k", "1", "1|"} {
		assertCode(t, 400, byName(bad))
	}

	must.NoError(t, srv.Endpoints.Services.ListByJob(&structs.JobSpecificRequest{JobID: "web", QueryOptions: q(reader.SecretID)}, &got))
	must.Len(t, 3, got.Services)
	must.NoError(t, srv.Endpoints.Services.ListByJob(&structs.JobSpecificRequest{JobID: "nope", QueryOptions: q(reader.SecretID)}, &got))
	must.Nil(t, got.Services)
	assertCode(t, 403, srv.Endpoints.Services.ListByJob(&structs.JobSpecificRequest{JobID: "web", QueryOptions: q(other.SecretID)}, &got))

	must.NoError(t, srv.Endpoints.Services.ListByAlloc(&structs.AllocSpecificRequest{AllocID: "a2", QueryOptions: q(reader.SecretID)}, &got))
	must.Len(t, 1, got.Services)
	must.Eq(t, api2.ID, got.Services[0].ID)
	assertCode(t, 403, srv.Endpoints.Services.ListByAlloc(&structs.AllocSpecificRequest{AllocID: "a2", QueryOptions: q(other.SecretID)}, &got))
}

// A client over its own connection registers and removes services with its node's secret;
// a missing or wrong secret is a 403 that writes nothing.
func TestSecurity_ClientRPC_ServiceRegistration(t *testing.T) {
	srv := rpcServer(t, nil)
	sess := clientConn(t, srv)
	node := testNode("n1")
	must.NoError(t, registerOverConn(t, sess, node, node.SecretID))
	registerJob(t, srv, "", mock.Job())
	stored, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	testPlaceAllocs(t, srv, stored, &structs.Allocation{ID: "a1", Name: "web.web[0]", TaskGroup: "web", NodeID: "n1"})
	svc := svcOf("a1", "api", 8080)
	upsert := func(token string) error {
		var reply structs.GenericResponse
		return clientRPC(t, sess, "ServiceRegistration.Upsert", &structs.ServiceRegistrationUpsertRequest{
			NodeID: node.ID, Services: []*structs.ServiceRegistration{svc}, WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
	}
	del := func(token string) error {
		var reply structs.GenericResponse
		return clientRPC(t, sess, "ServiceRegistration.DeleteByID", &structs.ServiceRegistrationDeleteByIDRequest{
			ID: svc.ID, NodeID: node.ID, WriteRequest: structs.WriteRequest{AuthToken: token}}, &reply)
	}
	before := srv.raft.LastIndex()
	for _, token := range []string{"", "00000000-bad0-4bad-8bad-000000000000"} {
		err := upsert(token)
		mustCode(t, 403, err)
		must.StrNotContains(t, err.Error(), node.SecretID)
		mustCode(t, 403, del(token))
	}
	must.Eq(t, before, srv.raft.LastIndex())

	must.NoError(t, upsert(node.SecretID))
	got, err := srv.State().ServiceRegistrationByID(nil, svc.ID)
	must.NoError(t, err)
	must.NotNil(t, got)
	must.NoError(t, del(node.SecretID))
	got, err = srv.State().ServiceRegistrationByID(nil, svc.ID)
	must.NoError(t, err)
	must.Nil(t, got)
}
