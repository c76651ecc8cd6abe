package nomad

import (
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/structs"
)

// CreateClientIntroductionToken signs a client introduction token: node write is required, as
// upstream. NodePool (default "default") must exist; TTL defaults to
// DefaultIntroductionTokenTTL and may not exceed MaxIntroductionTokenTTL. Nothing is stored.
func (a *ACL) CreateClientIntroductionToken(args *structs.ClientIntroductionTokenRequest, reply *structs.ClientIntroductionTokenResponse) error {
	aclObj, _, err := a.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowNodeWrite() {
		return structs.PermissionDenied("node write required to create a client introduction token")
	}
	ttl := args.TTL
	switch {
	case ttl < 0:
		return structs.BadRequest("TTL: must not be negative")
	case ttl == 0:
		ttl = structs.DefaultIntroductionTokenTTL
	case ttl > structs.MaxIntroductionTokenTTL:
		return structs.BadRequest("TTL: at most %s", structs.MaxIntroductionTokenTTL)
	}
	if len(args.NodeName) > 256 {
		return structs.BadRequest("NodeName: at most 256 bytes")
	}
	pool := args.NodePool
	if pool == "" {
		pool = structs.DefaultNodePool
	}
	store := a.srv.State()
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
		NodePool: pool, NodeName: args.NodeName,
		Claims: jwt.Claims{
			Subject:   "node-introduction:" + a.srv.config.Region + ":" + pool + ":" + args.NodeName,
			Audience:  jwt.Audience{structs.IntroductionTokenAudience},
			IssuedAt:  jwt.NewNumericDate(t),
			NotBefore: jwt.NewNumericDate(t),
			Expiry:    jwt.NewNumericDate(t.Add(ttl)),
			ID:        jti,
		},
	}
	token, err := a.srv.signJWT(store, claims)
	if err != nil {
		return err
	}
	reply.JWT = token
	return nil
}
