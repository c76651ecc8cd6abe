package nomad

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// UpsertTokens creates tokens (no AccessorID) or updates them (AccessorID set).
func (a *ACL) UpsertTokens(args *structs.ACLTokenUpsertRequest, reply *structs.ACLTokenUpsertResponse) error {
	if done, err := a.srv.forward("ACL.UpsertTokens", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "write ACL tokens")
	if err != nil {
		return err
	}
	if len(args.Tokens) != 1 {
		return structs.BadRequest("must specify exactly one token")
	}
	store := a.srv.State()
	in := args.Tokens[0]
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
	for _, p := range in.Policies {
		pol, err := store.ACLPolicyByName(nil, p)
		if err != nil {
			return err
		}
		if pol == nil {
			return structs.BadRequest("cannot find policy %s", p)
		}
	}
	roles, err := a.resolveRoleLinks(store, in.Roles)
	if err != nil {
		return err
	}
	var token *structs.ACLToken
	if in.AccessorID == "" {
		if in.ExpirationTTL < 0 {
			return structs.BadRequest("ExpirationTTL must not be negative")
		}
		if in.ExpirationTTL != 0 {
			if in.ExpirationTTL < a.srv.config.ACLTokenMinExpirationTTL || in.ExpirationTTL > a.srv.config.ACLTokenMaxExpirationTTL {
				return structs.BadRequest("expiration time cannot be less than %s or more than %s",
					a.srv.config.ACLTokenMinExpirationTTL, a.srv.config.ACLTokenMaxExpirationTTL)
			}
		}
		if in.ExpirationTime != nil && in.ExpirationTTL == 0 {
			if !in.ExpirationTime.After(now()) {
				return structs.BadRequest("ExpirationTime must be in the future")
			}
		}
		exp := in.ExpirationTime
		token, err = a.newToken(&structs.ACLToken{Name: in.Name, Type: in.Type, Policies: in.Policies, Roles: roles, Global: in.Global, ExpirationTTL: in.ExpirationTTL}, "")
		if err != nil {
			return err
		}
		if token.ExpirationTime == nil && exp != nil {
			token.ExpirationTime = exp
			token.SetHash()
		}
	} else {
		existing, err := store.ACLTokenByAccessorID(nil, in.AccessorID)
		if err != nil {
			return err
		}
		if existing == nil {
			return structs.NewErrCode(404, "ACL token %q not found", in.AccessorID)
		}
		if existing.Global != in.Global {
			return structs.BadRequest("cannot toggle global mode")
		}
		c := *existing
		c.Name, c.Type, c.Policies, c.Roles = in.Name, in.Type, in.Policies, roles
		c.SetHash()
		token = &c
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	index, err := a.srv.raftApply(structs.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{token}, Actor: actor})
	if err != nil {
		return err
	}
	stored, err := a.srv.State().ACLTokenByAccessorID(nil, token.AccessorID)
	if err != nil {
		return err
	}
	reply.Tokens = []*structs.ACLToken{stored}
	reply.Index = index
	return nil
}

// resolveRoleLinks fills role links given by ID or name with both.
func (a *ACL) resolveRoleLinks(store *state.StateStore, links []*structs.ACLTokenRoleLink) ([]*structs.ACLTokenRoleLink, error) {
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

// DeleteTokens deletes tokens and closes their event subscriptions.
func (a *ACL) DeleteTokens(args *structs.ACLTokenDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.forward("ACL.DeleteTokens", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "delete ACL tokens")
	if err != nil {
		return err
	}
	if len(args.AccessorIDs) == 0 {
		return structs.BadRequest("must specify as least one token")
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	reply.Index, err = a.srv.raftApply(structs.ACLTokenDeleteRequestType, args)
	return err
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

// GetToken reads a token: management sees any token with its secret; a token may read itself.
func (a *ACL) GetToken(args *TokenSpecificRequest, reply *SingleTokenResponse) error {
	if done, err := a.srv.forwardRead("ACL.GetToken", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	aclObj, actor, err := a.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() && (actor == nil || actor.AccessorID != args.AccessorID) {
		return structs.PermissionDenied("management token required to read other tokens")
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		t, err := store.ACLTokenByAccessorID(ws, args.AccessorID)
		if err != nil {
			return 0, err
		}
		reply.Token = t
		return store.Index("acl_token"), nil
	})
}

// ResolveSelf returns the caller's own token, secret included.
func (a *ACL) ResolveSelf(args *structs.QueryOptions, reply *SingleTokenResponse) error {
	if done, err := a.srv.forwardRead("ACL.ResolveSelf", args, args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	if args.AuthToken == "" {
		return structs.PermissionDenied("%s", structs.ErrTokenNotFound.Error())
	}
	if _, _, err := a.srv.resolveACL(args.AuthToken); err != nil {
		return err
	}
	t, err := a.srv.State().ACLTokenBySecretID(nil, args.AuthToken)
	if err != nil {
		return err
	}
	reply.Token = t
	reply.Index = a.srv.State().Index("acl_token")
	a.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// TokenListResponse answers ListTokens; stubs carry no secrets.
type TokenListResponse struct {
	Tokens []*structs.ACLTokenListStub
	structs.QueryMeta
}

// ListTokens lists tokens (management only).
func (a *ACL) ListTokens(args *structs.QueryOptions, reply *TokenListResponse) error {
	if done, err := a.srv.forwardRead("ACL.ListTokens", args, args, reply); done {
		return err
	}
	if _, err := a.requireManagement(args.AuthToken, "list ACL tokens"); err != nil {
		return err
	}
	return a.srv.blockingRPC(args, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.ACLTokens(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		// The filter sees the stub, which has no SecretID: a secret cannot be probed with it.
		reply.Tokens, reply.NextToken, err = paginator.Page(all, *args,
			paginator.Order[*structs.ACLToken]{Key: func(t *structs.ACLToken) paginator.Key {
				return createIndexOrID(args.Prefix, t.CreateIndex, t.AccessorID)
			}},
			nil, func(t *structs.ACLToken) (*structs.ACLTokenListStub, error) { return t.Stub(), nil })
		if err != nil {
			return 0, err
		}
		return store.Index("acl_token"), nil
	})
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
