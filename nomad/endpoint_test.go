package nomad

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// authorizeRow runs one row's rule, turning a panic (a rule that cannot read the zero
// request) into an error the matrix reports.
func authorizeRow(row endpoint, c *rpcCall) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("Authorize panicked on the zero request: %v", p)
		}
	}()
	return row.authorize(c, row.newArgs())
}

// TestEndpointTable_ACLMatrix is the ACL matrix, generated from the table: for every row, a
// caller whose token grants nothing is refused with a 403 unless the row is open to anyone,
// and a management token passes every rule but the node's own calls, which only the node's
// secret may make.
func TestEndpointTable_ACLMatrix(t *testing.T) {
	srv, _ := testACLServer(t, nil)
	anonACL, anonActor, err := srv.resolveACL("")
	must.NoError(t, err)
	must.False(t, anonACL.IsManagement())
	must.Greater(t, 0, len(routeTable))
	for _, name := range routeNames() {
		row := routeTable[name]
		t.Run(name, func(t *testing.T) {
			anon := authorizeRow(row, &rpcCall{srv: srv, acl: anonACL, actor: anonActor})
			mgmt := authorizeRow(row, &rpcCall{srv: srv, acl: acl.ManagementACL, actor: &structs.Actor{AccessorID: "matrix", Name: "management", Type: "management"}})
			switch row.Caller() {
			case callerToken, callerNodeOrToken:
				must.ErrorIs(t, anon, structs.ErrPermissionDenied, must.Sprint("a caller without capabilities must be refused"))
				must.Eq(t, 403, structs.ErrorCode(anon))
				if mgmt != nil {
					must.False(t, errors.Is(mgmt, structs.ErrPermissionDenied), must.Sprintf("management refused: %v", mgmt))
				}
			case callerNode:
				must.ErrorIs(t, anon, structs.ErrPermissionDenied)
				must.ErrorIs(t, mgmt, structs.ErrPermissionDenied, must.Sprint("only the node's own secret may make a node's call"))
			case callerAnyone:
				if mgmt != nil {
					must.False(t, errors.Is(mgmt, structs.ErrPermissionDenied), must.Sprintf("management refused: %v", mgmt))
				}
			}
		})
	}
}

// TestEndpointTable_RowNeedsARule: a row cannot be declared without its authorisation, twice,
// or with a request the pipeline cannot read its token from.
func TestEndpointTable_RowNeedsARule(t *testing.T) {
	type noToken struct{}
	serve := func(*rpcCall, *structs.NamespaceListRequest, *structs.NamespaceListResponse) error { return nil }
	cases := map[string]func(){
		"no Authorize": func() {
			read("Test.NoRule", spec[structs.NamespaceListRequest, structs.NamespaceListResponse]{Serve: serve})
		},
		"declared twice": func() {
			read("Namespace.List", spec[structs.NamespaceListRequest, structs.NamespaceListResponse]{
				Authorize: anyone[structs.NamespaceListRequest], Serve: serve})
		},
		"read without QueryOptions": func() {
			read("Test.NoOptions", spec[noToken, structs.GenericResponse]{
				Authorize: anyone[noToken], Serve: func(*rpcCall, *noToken, *structs.GenericResponse) error { return nil }})
		},
		"write without a token": func() {
			write("Test.NoToken", spec[noToken, structs.GenericResponse]{
				Authorize: anyone[noToken], Message: structs.NamespaceUpsertRequestType})
		},
		"write with neither Serve nor Message": func() {
			write("Test.Nothing", spec[structs.NamespaceDeleteRequest, structs.GenericResponse]{
				Authorize: anyone[structs.NamespaceDeleteRequest]})
		},
	}
	for name, declare := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() { must.NotNil(t, recover(), must.Sprint("the declaration must be refused")) }()
			declare()
		})
	}
	for _, name := range []string{"Test.NoRule", "Test.NoOptions", "Test.NoToken", "Test.Nothing"} {
		_, ok := routeTable[name]
		must.False(t, ok, must.Sprintf("%s must not be in the table", name))
	}
}

// TestEndpointTable_WireRefusesAnonymous: over RPC, a row refuses a caller without a token
// exactly as in-process, with the 403 and its kind on the wire.
func TestEndpointTable_WireRefusesAnonymous(t *testing.T) {
	srv, root := testACLServer(t, nil)
	body, err := encodeBody(&structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{{Name: "wire"}}})
	must.NoError(t, err)
	resp := srv.dispatchRPC(&rpcRequest{Method: "Namespace.Upsert", Body: body})
	must.Eq(t, 403, resp.Code)
	must.StrHasPrefix(t, "Permission denied", resp.Error)
	must.ErrorIs(t, structs.WireError(resp.Code, resp.Kind, resp.Error), structs.ErrPermissionDenied)

	body, err = encodeBody(&structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{{Name: "wire"}},
		WriteRequest: structs.WriteRequest{AuthToken: root}})
	must.NoError(t, err)
	resp = srv.dispatchRPC(&rpcRequest{Method: "Namespace.Upsert", Body: body})
	must.Eq(t, "", resp.Error)
	ns, err := srv.State().NamespaceByName(nil, "wire")
	must.NoError(t, err)
	must.NotNil(t, ns)

	resp = srv.dispatchRPC(&rpcRequest{Method: "Namespace.Nope", Body: body})
	must.Eq(t, 400, resp.Code)
}

// TestEndpointTable_TokenReadAfterPrepare: a row whose Prepare sets the token aside (a call
// that needs none, such as bootstrap or login) is not refused for a stale token the caller
// still sends; a row without that Prepare is.
func TestEndpointTable_TokenReadAfterPrepare(t *testing.T) {
	srv, _ := testACLServer(t, nil)
	serve := func(_ *rpcCall, _ *structs.NamespaceListRequest, resp *structs.NamespaceListResponse) error {
		resp.Namespaces = []*structs.Namespace{{Name: "served"}}
		return nil
	}
	plain := &route[structs.NamespaceListRequest, structs.NamespaceListResponse]{name: "Test.Plain", access: accessRead,
		spec: spec[structs.NamespaceListRequest, structs.NamespaceListResponse]{Caller: callerAnyone,
			Authorize: anyone[structs.NamespaceListRequest], Serve: serve}}
	prepared := &route[structs.NamespaceListRequest, structs.NamespaceListResponse]{name: "Test.Prepared", access: accessRead,
		spec: spec[structs.NamespaceListRequest, structs.NamespaceListResponse]{Caller: callerAnyone,
			Prepare:   func(req *structs.NamespaceListRequest) error { req.AuthToken = ""; return nil },
			Authorize: anyone[structs.NamespaceListRequest], Serve: serve}}
	stale := structs.QueryOptions{AllowStale: true, AuthToken: "00000000-0000-0000-0000-00000000dead"}

	var resp structs.NamespaceListResponse
	err := plain.Call(srv, &structs.NamespaceListRequest{QueryOptions: stale}, &resp)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)

	err = prepared.Call(srv, &structs.NamespaceListRequest{QueryOptions: stale}, &resp)
	must.NoError(t, err)
	must.Eq(t, "served", resp.Namespaces[0].Name)
}
