package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixNodeIdentityEndpoints() []matrixEndpoint {
	// The matrix agent runs no client: an unknown node answers 404 once the caller passed.
	return []matrixEndpoint{
		{name: "node identity get", method: "GET", path: "/v1/client/identity?node_id=no-such-node", allow: allowNodeRead, okStatus: 404},
		{name: "node identity renew", method: "POST", path: "/v1/client/identity/renew",
			body: `{"NodeID":"no-such-node"}`, allow: allowNodeWrite, okStatus: 404},
		{name: "node identity renew put", method: "PUT", path: "/v1/client/identity/renew",
			body: `{"NodeID":"no-such-node"}`, allow: allowNodeWrite, okStatus: 404},
	}
}

func TestACLMatrix_NodeIdentity(t *testing.T) {
	runACLMatrix(t, matrixNodeIdentityEndpoints(), matrixRows)
}

// The node's identity through the official client: its claims, never the token; a renewal
// gives a new one.
func TestNodeIdentity_GetAndRenewThroughOfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	nodeID := ta.Agent.Client().NodeID()

	got, err := c.Nodes().Identity().Get(&api.NodeIdentityGetRequest{NodeID: nodeID}, nil)
	must.NoError(t, err)
	must.MapLen(t, 9, got.Claims)
	must.Eq[any](t, nodeID, got.Claims["nomad_node_id"])

	_, err = c.Nodes().Identity().Renew(&api.NodeIdentityRenewRequest{NodeID: nodeID}, nil)
	must.NoError(t, err)
	again, err := c.Nodes().Identity().Get(&api.NodeIdentityGetRequest{}, nil)
	must.NoError(t, err)
	must.Eq[any](t, nodeID, again.Claims["nomad_node_id"])

	res := doHTTP(t, ta, "GET", "/v1/client/identity", nil, http.Header{})
	must.Eq(t, 200, res.status)
	must.StrNotContains(t, res.body, "eyJ")
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"DELETE", "/v1/client/identity", 405},
		{"GET", "/v1/client/identity/renew", 405},
		{"GET", "/v1/client/identity?node_id=nope", 404},
	} {
		res := doHTTP(t, ta, tc.method, tc.path, strings.NewReader(""), http.Header{})
		must.Eq(t, tc.want, res.status, must.Sprint(tc.method, tc.path, res.body))
	}
}
