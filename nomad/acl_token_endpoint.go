package nomad

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

var aclUpsertTokens = write("ACL.UpsertTokens", spec[structs.ACLTokenUpsertRequest, structs.ACLTokenUpsertResponse]{
	Authorize: aclManagement[structs.ACLTokenUpsertRequest]("write ACL tokens"),
	Validate: func(req *structs.ACLTokenUpsertRequest) error {
		if len(req.Tokens) != 1 {
			return structs.BadRequest("must specify exactly one token")
		}
		in := req.Tokens[0]
		switch in.Type {
		case structs.ACLClientToken:
			if len(in.Policies) == 0 && len(in.Roles) == 0 {
				return structs.BadRequest("client token missing policies or roles")
			}
		case structs.ACLManagementToken:
			if len(in.Policies) != 0 || len(in.Roles) != 0 {
				return structs.BadRequest("management token cannot be associated with policies or roles")
			}
		default:
			return structs.BadRequest("token type must be client or management")
		}
		if len(in.Name) > 256 {
			return structs.BadRequest("token name too long")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.ACLTokenUpsertRequest, reply *structs.ACLTokenUpsertResponse) error {
		store := c.srv.State()
		in := req.Tokens[0]
		// A policy named here need not exist yet, as upstream: the token gets its rules once it
		// does (tools create tokens and policies in either order). A missing one grants nothing.
		roles, err := aclResolveRoleLinks(store, in.Roles)
		if err != nil {
			return err
		}
		var existing *structs.ACLToken
		if in.AccessorID != "" {
			if existing, err = store.ACLTokenByAccessorID(nil, in.AccessorID); err != nil {
				return err
			}
			if existing == nil && in.SecretID == "" {
				return structs.NewErrCode(404, "ACL token %q not found", in.AccessorID)
			}
		}
		var token *structs.ACLToken
		if existing == nil {
			cfg := c.srv.config
			if in.ExpirationTTL < 0 {
				return structs.BadRequest("ExpirationTTL must not be negative")
			}
			if in.ExpirationTTL != 0 {
				if in.ExpirationTTL < cfg.ACLTokenMinExpirationTTL || in.ExpirationTTL > cfg.ACLTokenMaxExpirationTTL {
					return structs.BadRequest("expiration time cannot be less than %s or more than %s",
						cfg.ACLTokenMinExpirationTTL, cfg.ACLTokenMaxExpirationTTL)
				}
			}
			if in.ExpirationTime != nil && in.ExpirationTTL == 0 {
				if !in.ExpirationTime.After(now()) {
					return structs.BadRequest("ExpirationTime must be in the future")
				}
			}
			exp := in.ExpirationTime
			if in.AccessorID != "" {
				// An upload (PUT /v1/acl/token/:accessor of a token this cluster does not hold):
				// the token keeps the IDs it had elsewhere.
				token, err = aclUploadedToken(store, in, roles)
			} else {
				token, err = aclNewToken(&structs.ACLToken{Name: in.Name, Type: in.Type, Policies: in.Policies, Roles: roles, Global: in.Global, ExpirationTTL: in.ExpirationTTL}, "")
			}
			if err != nil {
				return err
			}
			if token.ExpirationTime == nil && exp != nil {
				token.ExpirationTime = exp
				token.SetHash()
			}
		} else {
			if existing.Global != in.Global {
				return structs.BadRequest("cannot toggle global mode")
			}
			if in.ExpirationTTL != 0 && in.ExpirationTTL != existing.ExpirationTTL {
				return structs.BadRequest("cannot update expiration TTL")
			}
			cp := *existing
			cp.Name, cp.Type, cp.Policies, cp.Roles = in.Name, in.Type, in.Policies, roles
			cp.SetHash()
			token = &cp
		}
		return aclApplyToken(c, reply, token.AccessorID, structs.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{token}, Actor: c.actor})
	},
})

// UpsertTokens creates tokens (no AccessorID) or updates them (AccessorID set).
func (a *ACL) UpsertTokens(args *structs.ACLTokenUpsertRequest, reply *structs.ACLTokenUpsertResponse) error {
	return aclUpsertTokens.Call(a.srv, args, reply)
}

// aclUploadedToken is a client token imported with the accessor and secret IDs it was given
// elsewhere. Both must be UUIDs that no token here uses; management tokens are never imported.
func aclUploadedToken(store *state.StateStore, in *structs.ACLToken, roles []*structs.ACLTokenRoleLink) (*structs.ACLToken, error) {
	if in.Type != structs.ACLClientToken {
		return nil, structs.BadRequest("cannot upload management tokens")
	}
	if _, err := uuid.ParseUUID(in.AccessorID); err != nil {
		return nil, structs.BadRequest("invalid accessor ID: must be a UUID")
	}
	if _, err := uuid.ParseUUID(in.SecretID); err != nil {
		return nil, structs.BadRequest("invalid secret ID: must be a UUID")
	}
	taken, err := store.ACLTokenBySecretID(nil, in.SecretID)
	if err != nil {
		return nil, err
	}
	if taken != nil {
		return nil, structs.BadRequest("secret ID already in use")
	}
	token, err := aclNewToken(&structs.ACLToken{Name: in.Name, Type: in.Type, Policies: in.Policies, Roles: roles,
		Global: in.Global, ExpirationTTL: in.ExpirationTTL}, "")
	if err != nil {
		return nil, err
	}
	token.AccessorID, token.SecretID = in.AccessorID, in.SecretID
	token.SetHash()
	return token, nil
}

// aclResolveRoleLinks fills role links given by ID or name with both.
func aclResolveRoleLinks(store *state.StateStore, links []*structs.ACLTokenRoleLink) ([]*structs.ACLTokenRoleLink, error) {
	var out []*structs.ACLTokenRoleLink
	for _, link := range links {
		var role *structs.ACLRole
		var err error
		if link.ID != "" {
			role, err = store.ACLRoleByID(nil, link.ID)
		} else {
			role, err = store.ACLRoleByName(nil, link.Name)
		}
		if err != nil {
			return nil, err
		}
		if role == nil {
			return nil, structs.BadRequest("cannot find role %s%s", link.ID, link.Name)
		}
		out = append(out, &structs.ACLTokenRoleLink{ID: role.ID, Name: role.Name})
	}
	return out, nil
}

var aclDeleteTokens = write("ACL.DeleteTokens", spec[structs.ACLTokenDeleteRequest, structs.GenericResponse]{
	Authorize: aclManagement[structs.ACLTokenDeleteRequest]("delete ACL tokens"),
	Validate:  atLeastOne(func(req *structs.ACLTokenDeleteRequest) int { return len(req.AccessorIDs) }, "must specify as least one token"),
	Fix:       func(c *rpcCall, req *structs.ACLTokenDeleteRequest) { req.Actor = c.actor },
	Message:   structs.ACLTokenDeleteRequestType,
})

// DeleteTokens deletes tokens and closes their event subscriptions.
func (a *ACL) DeleteTokens(args *structs.ACLTokenDeleteRequest, reply *structs.GenericResponse) error {
	return aclDeleteTokens.Call(a.srv, args, reply)
}

// TokenSpecificRequest reads one token by AccessorID.
type TokenSpecificRequest struct {
	AccessorID string
	structs.QueryOptions
}

// SingleTokenResponse answers TokenSpecificRequest.
type SingleTokenResponse struct {
	Token *structs.ACLToken
	structs.QueryMeta
}

// aclGetToken: management sees any token with its secret; a token may read itself.
var aclGetToken = read("ACL.GetToken", spec[TokenSpecificRequest, SingleTokenResponse]{
	Authorize: func(c *rpcCall, req *TokenSpecificRequest) error {
		if err := aclRequireEnabled(c.srv); err != nil {
			return err
		}
		if !c.acl.IsManagement() && (c.actor == nil || c.actor.AccessorID != req.AccessorID) {
			return structs.PermissionDenied("management token required to read other tokens")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *TokenSpecificRequest, reply *SingleTokenResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.ACLToken, error) {
				return store.ACLTokenByAccessorID(ws, req.AccessorID)
			},
			func(t *structs.ACLToken) { reply.Token = t }, nil, "acl_token")
	},
})

// GetToken reads a token: management sees any token with its secret; a token may read itself.
func (a *ACL) GetToken(args *TokenSpecificRequest, reply *SingleTokenResponse) error {
	return aclGetToken.Call(a.srv, args, reply)
}

// aclResolveSelf returns the caller's own token, secret included: any token may, whatever
// it grants; the anonymous caller has none.
var aclResolveSelf = read("ACL.ResolveSelf", spec[structs.QueryOptions, SingleTokenResponse]{
	Authorize: aclOwnToken[structs.QueryOptions](structs.ErrTokenNotFound.Error()),
	Serve: func(c *rpcCall, _ *structs.QueryOptions, reply *SingleTokenResponse) error {
		t, err := c.srv.State().ACLTokenBySecretID(nil, c.token)
		if err != nil {
			return err
		}
		reply.Token = t
		reply.Index = c.srv.State().Index("acl_token")
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// ResolveSelf returns the caller's own token, secret included.
func (a *ACL) ResolveSelf(args *structs.QueryOptions, reply *SingleTokenResponse) error {
	return aclResolveSelf.Call(a.srv, args, reply)
}

// TokenListResponse answers ListTokens; stubs carry no secrets.
type TokenListResponse struct {
	Tokens []*structs.ACLTokenListStub
	structs.QueryMeta
}

var aclListTokens = read("ACL.ListTokens", spec[structs.QueryOptions, TokenListResponse]{
	Authorize: aclManagement[structs.QueryOptions]("list ACL tokens"),
	Serve: func(c *rpcCall, req *structs.QueryOptions, reply *TokenListResponse) error {
		// The filter sees the stub, which has no SecretID: a secret cannot be probed with it.
		return pagedList(c.srv.blockingRPC, req, &reply.QueryMeta, &reply.Tokens,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.ACLToken, error) {
				return store.ACLTokens(ws, req.Prefix)
			},
			paginator.Order[*structs.ACLToken]{Key: func(t *structs.ACLToken) paginator.Key {
				return createIndexOrID(req.Prefix, t.CreateIndex, t.AccessorID)
			}},
			nil,
			func(t *structs.ACLToken) (*structs.ACLTokenListStub, error) { return t.Stub(), nil },
			func(store *state.StateStore) uint64 { return store.Index("acl_token") })
	},
})

// ListTokens lists tokens (management only).
func (a *ACL) ListTokens(args *structs.QueryOptions, reply *TokenListResponse) error {
	return aclListTokens.Call(a.srv, args, reply)
}

// expiredTokenReapBatch bounds one Raft entry of expired-token deletes.
const expiredTokenReapBatch = 256

// reapExpiredTokens deletes expired tokens through Raft; the leader calls it periodically.
func (s *Server) reapExpiredTokens() error {
	tokens, err := s.State().ACLTokens(nil, "")
	if err != nil {
		return err
	}
	t := time.Now()
	var expired []string
	for _, tok := range tokens {
		if tok.IsExpired(t) {
			expired = append(expired, tok.AccessorID)
		}
		if len(expired) == expiredTokenReapBatch {
			break
		}
	}
	if len(expired) == 0 {
		return nil
	}
	_, err = s.raftApply(structs.ACLTokenDeleteRequestType, &structs.ACLTokenDeleteRequest{
		AccessorIDs: expired, Actor: &structs.Actor{Type: structs.ActorTypeSystem, Name: "token-expiry"},
	})
	return err
}
