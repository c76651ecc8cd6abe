package nomad

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
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
	// A policy named here need not exist yet, as upstream: the token gets its rules once it
	// does (tools create tokens and policies in either order). A missing one grants nothing.
	roles, err := a.resolveRoleLinks(store, in.Roles)
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
		if in.AccessorID != "" {
			// An upload (PUT /v1/acl/token/:accessor of a token this cluster does not hold):
			// the token keeps the IDs it had elsewhere.
			token, err = a.uploadedToken(store, in, roles)
		} else {
			token, err = a.newToken(&structs.ACLToken{Name: in.Name, Type: in.Type, Policies: in.Policies, Roles: roles, Global: in.Global, ExpirationTTL: in.ExpirationTTL}, "")
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

// uploadedToken is a client token imported with the accessor and secret IDs it was given
// elsewhere. Both must be UUIDs that no token here uses; management tokens are never imported.
func (a *ACL) uploadedToken(store *state.StateStore, in *structs.ACLToken, roles []*structs.ACLTokenRoleLink) (*structs.ACLToken, error) {
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
	token, err := a.newToken(&structs.ACLToken{Name: in.Name, Type: in.Type, Policies: in.Policies, Roles: roles,
		Global: in.Global, ExpirationTTL: in.ExpirationTTL}, "")
	if err != nil {
		return nil, err
	}
	token.AccessorID, token.SecretID = in.AccessorID, in.SecretID
	token.SetHash()
	return token, nil
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
