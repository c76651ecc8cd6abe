package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestNodeRows_NodeSecretIsNoAPIToken: a node's secret and its identity open the node's own
// calls and nothing else. On an operator's row, on another node's row or where only a token
// may act, they are refused with a 403 that repeats neither, and an operator's management
// token cannot make the node's own calls.
func TestNodeRows_NodeSecretIsNoAPIToken(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node, other := mock.Node("rows-n1"), mock.Node("rows-n2")
	registerNode(t, srv, node, mgmt)
	registerNode(t, srv, other, mgmt)
	ident, err := signNode(srv, node.ID, node.SecretID)
	must.NoError(t, err)

	for name, secret := range map[string]string{"secret": node.SecretID, "identity": ident.JWT} {
		t.Run(name, func(t *testing.T) {
			query := structs.QueryOptions{AuthToken: secret}
			var own structs.NodeAllocsResponse
			must.NoError(t, srv.Endpoints.Node.GetAllocs(&structs.NodeSpecificRequest{NodeID: node.ID, QueryOptions: query}, &own))

			refused := map[string]func() error{
				"Node.List": func() error {
					return srv.Endpoints.Node.List(&structs.NodeListRequest{QueryOptions: query}, &structs.NodeListResponse{})
				},
				"NodePool.List": func() error {
					return srv.Endpoints.NodePool.List(&structs.NodePoolListRequest{QueryOptions: query}, &structs.NodePoolListResponse{})
				},
				"Node.GetNode of another node": func() error {
					return srv.Endpoints.Node.GetNode(&structs.NodeSpecificRequest{NodeID: other.ID, QueryOptions: query}, &structs.SingleNodeResponse{})
				},
				"Node.UpdateDrain of itself": func() error {
					return srv.Endpoints.Node.UpdateDrain(&structs.NodeUpdateDrainRequest{NodeID: node.ID,
						WriteRequest: structs.WriteRequest{AuthToken: secret}}, &structs.NodeDrainUpdateResponse{})
				},
				"ServiceRegistration.DeleteByID as an operator": func() error {
					return srv.Endpoints.Services.DeleteByID(&structs.ServiceRegistrationDeleteByIDRequest{ID: "_nomad-task-x",
						WriteRequest: structs.WriteRequest{AuthToken: secret}}, &structs.GenericResponse{})
				},
			}
			for call, fn := range refused {
				err := fn()
				must.ErrorIs(t, err, structs.ErrPermissionDenied, must.Sprint(call))
				must.Eq(t, 403, structs.ErrorCode(err), must.Sprint(call))
				must.StrNotContains(t, err.Error(), secret, must.Sprint(call))
			}
		})
	}

	err = srv.Endpoints.Node.SignIdentity(&structs.NodeIdentitySignRequest{NodeID: node.ID,
		QueryOptions: structs.QueryOptions{AuthToken: mgmt}}, &structs.NodeIdentitySignResponse{})
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.StrNotContains(t, err.Error(), mgmt)
}
