package nomad

import (
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

var nodeSignIdentity = read("Node.SignIdentity", spec[structs.NodeIdentitySignRequest, structs.NodeIdentitySignResponse]{
	Caller:    callerNode,
	Authorize: nodeSecret(func(req *structs.NodeIdentitySignRequest) string { return req.NodeID }),
	Serve: func(c *rpcCall, req *structs.NodeIdentitySignRequest, reply *structs.NodeIdentitySignResponse) error {
		store := c.srv.State()
		node, err := store.NodeByID(nil, req.NodeID)
		if err != nil {
			return err
		}
		if node == nil {
			return structs.NotFound(structs.ErrNodeNotFound)
		}
		ttl := structs.DefaultNodeIdentityTTL
		if pool, err := store.NodePoolByName(nil, node.NodePool); err != nil {
			return err
		} else if pool != nil && pool.NodeIdentityTTL > 0 {
			ttl = pool.NodeIdentityTTL
		}
		token, exp, err := c.srv.signNodeIdentity(store, node, ttl, now())
		if err != nil {
			return err
		}
		reply.JWT, reply.Expiration = token, exp
		reply.Index = store.Index("nodes")
		return nil
	},
})

// SignIdentity signs a fresh identity for the calling node, valid for its node pool's
// NodeIdentityTTL (DefaultNodeIdentityTTL when the pool sets none). Only the node itself asks:
// its secret, or the identity it holds now. Any server signs, with its own copy of the keyring:
// clients ask with AllowStale, so the call stays on the server it reached.
func (n *Node) SignIdentity(args *structs.NodeIdentitySignRequest, reply *structs.NodeIdentitySignResponse) error {
	return nodeSignIdentity.Call(n.srv, args, reply)
}

func (s *Server) signNodeIdentity(store *state.StateStore, node *structs.Node, ttl time.Duration, now time.Time) (string, int64, error) {
	exp := now.Add(ttl)
	claims := structs.NodeIdentityClaims{
		NodeID: node.ID, NodePool: node.NodePool, NodeClass: node.NodeClass, NodeDatacenter: node.Datacenter,
		Claims: jwt.Claims{
			Subject:   structs.NodeIdentitySubject(s.config.Region, node),
			Audience:  jwt.Audience{structs.NodeIdentityAudience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			Expiry:    jwt.NewNumericDate(exp),
		},
	}
	token, err := s.signJWT(store, claims)
	if err != nil {
		return "", 0, err
	}
	return token, exp.Unix(), nil
}

// verifyNodeIdentity reports whether token is a valid identity of node nodeID: signed by a
// root key of the keyring, not expired, for that node, and with the audience of node
// identities (so no workload identity passes for one).
func (s *Server) verifyNodeIdentity(store *state.StateStore, token, nodeID string, now time.Time) bool {
	var claims structs.NodeIdentityClaims
	if err := s.verifySignedClaims(store, token, &claims); err != nil {
		return false
	}
	if err := claims.Claims.ValidateWithLeeway(jwt.Expected{Time: now, AnyAudience: jwt.Audience{structs.NodeIdentityAudience}}, identityLeeway); err != nil {
		return false
	}
	return claims.NodeID != "" && claims.NodeID == nodeID
}
