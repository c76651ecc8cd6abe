package nomad

import (
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func signNode(srv *Server, nodeID, secret string) (*structs.NodeIdentitySignResponse, error) {
	var reply structs.NodeIdentitySignResponse
	err := srv.Endpoints.Node.SignIdentity(&structs.NodeIdentitySignRequest{
		NodeID: nodeID, QueryOptions: structs.QueryOptions{AuthToken: secret}}, &reply)
	return &reply, err
}

// A node's identity names the node, and stands for its secret in the node's own calls only.
func TestSecurity_NodeIdentity(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node, other := mock.Node("n1"), mock.Node("n2")
	node.NodeClass = "fast"
	registerNode(t, srv, node, mgmt)
	registerNode(t, srv, other, mgmt)

	reply, err := signNode(srv, node.ID, node.SecretID)
	must.NoError(t, err)
	parsed, err := jwt.ParseSigned(reply.JWT, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	claims := map[string]any{}
	must.NoError(t, parsed.UnsafeClaimsWithoutVerification(&claims))
	must.MapLen(t, 9, claims)
	must.Eq(t, "n1", claims["nomad_node_id"])
	must.Eq(t, "default", claims["nomad_node_pool"])
	must.Eq(t, "fast", claims["nomad_node_class"])
	must.Eq(t, "dc1", claims["nomad_node_datacenter"])
	must.Eq(t, "node:global:dc1:default:n1", claims["sub"])
	exp := time.Unix(reply.Expiration, 0)
	must.True(t, exp.After(time.Now().Add(23*time.Hour)) && exp.Before(time.Now().Add(25*time.Hour)))

	// It authenticates the node's own calls, as its secret does, and renews itself.
	must.NoError(t, srv.authenticateNode(node.ID, reply.JWT))
	var status structs.NodeUpdateResponse
	must.NoError(t, srv.Endpoints.Node.UpdateStatus(&structs.NodeUpdateStatusRequest{NodeID: node.ID, Status: structs.NodeStatusReady,
		WriteRequest: structs.WriteRequest{AuthToken: reply.JWT}}, &status))
	_, err = signNode(srv, node.ID, reply.JWT)
	must.NoError(t, err)

	refused := []struct {
		name string
		fn   func() error
	}{
		{"another node's calls", func() error { return srv.authenticateNode(other.ID, reply.JWT) }},
		{"another node's reads", func() error {
			return srv.Endpoints.Node.GetAllocs(&structs.NodeSpecificRequest{NodeID: other.ID,
				QueryOptions: structs.QueryOptions{AuthToken: reply.JWT}}, &structs.NodeAllocsResponse{})
		}},
		{"as an API token", func() error { _, _, err := srv.resolveACL(reply.JWT); return err }},
		{"signing for another node", func() error { _, err := signNode(srv, other.ID, reply.JWT); return err }},
		{"another node's secret", func() error { _, err := signNode(srv, node.ID, other.SecretID); return err }},
		{"a management token", func() error { _, err := signNode(srv, node.ID, mgmt); return err }},
		{"expired", func() error {
			stale, _, err := srv.signNodeIdentity(srv.State(), node, time.Minute, time.Now().Add(-time.Hour))
			must.NoError(t, err)
			return srv.authenticateNode(node.ID, stale)
		}},
		{"a workload identity", func() error {
			job := identityJob("web")
			alloc := placeIdentityAlloc(t, srv, mgmt, node, job, "a1000000-0000-0000-0000-000000000009")
			wi := signOne(t, srv, node, alloc.ID, "default").JWT
			return srv.authenticateNode(node.ID, wi)
		}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.fn()
			must.Error(t, err)
			must.True(t, strings.HasPrefix(err.Error(), "Permission denied"), must.Sprint(err))
			must.StrNotContains(t, err.Error(), reply.JWT)
		})
	}
}

// A node pool's NodeIdentityTTL sets the identity's lifetime.
func TestNodeIdentity_PoolTTL(t *testing.T) {
	srv := testServer(t, nil)
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.NodePool.UpsertNodePools(&structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "short", NodeIdentityTTL: time.Hour}}}, &gr))
	node := mock.Node("n1")
	node.NodePool = "short"
	registerNode(t, srv, node, "")
	reply, err := signNode(srv, node.ID, node.SecretID)
	must.NoError(t, err)
	exp := time.Unix(reply.Expiration, 0)
	must.True(t, exp.Before(time.Now().Add(61*time.Minute)) && exp.After(time.Now().Add(59*time.Minute)))
}
