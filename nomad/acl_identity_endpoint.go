package nomad

import (
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/structs"
)

// aclCreateClientIntroductionToken signs a client introduction token: node write is required,
// as upstream. NodePool (default "default") must exist; TTL defaults to client_introduction's
// default_identity_ttl and may not exceed its max_identity_ttl (a 400 rather than upstream's
// silent cut, so nobody holds a token shorter than they asked for). Nothing is stored. Unlike
// the other ACL rows it works with ACLs off, where every caller holds node write.
var aclCreateClientIntroductionToken = write("ACL.CreateClientIntroductionToken", spec[structs.ClientIntroductionTokenRequest, structs.ClientIntroductionTokenResponse]{
	Authorize: func(c *rpcCall, _ *structs.ClientIntroductionTokenRequest) error {
		if !c.acl.AllowNodeWrite() {
			return structs.PermissionDenied("node write required to create a client introduction token")
		}
		return nil
	},
	Validate: func(req *structs.ClientIntroductionTokenRequest) error {
		if req.TTL < 0 {
			return structs.BadRequest("TTL: must not be negative")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.ClientIntroductionTokenRequest, reply *structs.ClientIntroductionTokenResponse) error {
		ttl, cfg := req.TTL, c.srv.config.ClientIntroduction
		switch {
		case ttl == 0:
			ttl = cfg.DefaultIdentityTTL
		case ttl > cfg.MaxIdentityTTL:
			return structs.BadRequest("TTL: at most %s (server.client_introduction.max_identity_ttl)", cfg.MaxIdentityTTL)
		}
		if len(req.NodeName) > 256 {
			return structs.BadRequest("NodeName: at most 256 bytes")
		}
		pool := req.NodePool
		if pool == "" {
			pool = structs.DefaultNodePool
		}
		store := c.srv.State()
		if p, err := store.NodePoolByName(nil, pool); err != nil {
			return err
		} else if p == nil {
			return structs.BadRequest("NodePool: node pool %q not found", pool)
		}
		jti, err := uuid.GenerateUUID()
		if err != nil {
			return err
		}
		t := now()
		claims := structs.ClientIntroductionClaims{
			NodePool: pool, NodeName: req.NodeName,
			Claims: jwt.Claims{
				Subject:   "node-introduction:" + c.srv.config.Region + ":" + pool + ":" + req.NodeName,
				Audience:  jwt.Audience{structs.IntroductionTokenAudience},
				IssuedAt:  jwt.NewNumericDate(t),
				NotBefore: jwt.NewNumericDate(t),
				Expiry:    jwt.NewNumericDate(t.Add(ttl)),
				ID:        jti,
			},
		}
		token, err := c.srv.signJWT(store, claims)
		if err != nil {
			return err
		}
		reply.JWT = token
		return nil
	},
})

// CreateClientIntroductionToken signs a client introduction token for a node yet to join.
func (a *ACL) CreateClientIntroductionToken(args *structs.ClientIntroductionTokenRequest, reply *structs.ClientIntroductionTokenResponse) error {
	return aclCreateClientIntroductionToken.Call(a.srv, args, reply)
}
