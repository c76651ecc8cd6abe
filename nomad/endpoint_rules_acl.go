package nomad

import "github.com/nomadfork/nomad/structs"

// Rules of the ACL rows. Every ACL call but the client introduction token answers 400 while
// ACLs are off: with no ACL system there is nothing to bootstrap, log in to or manage, and
// saying so beats the disabled ACL's "everything allowed".

// aclRequireEnabled refuses a call to the ACL system of a server that runs without one.
func aclRequireEnabled(s *Server) error {
	if !s.config.ACLEnabled {
		return structs.BadRequest("%s", structs.ErrACLDisabled.Error())
	}
	return nil
}

// aclEnabled is the rule of ACL rows open to every caller (bootstrap, login, the caller's own
// policies): they only need ACLs on.
func aclEnabled[Req any](c *rpcCall, _ *Req) error {
	return aclRequireEnabled(c.srv)
}

// aclManagement allows only a management token; unlike the shared management rule, ACLs
// off is a 400 rather than a pass.
func aclManagement[Req any](what string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, _ *Req) error {
		if err := aclRequireEnabled(c.srv); err != nil {
			return err
		}
		if !c.acl.IsManagement() {
			return structs.PermissionDenied("management token required to %s", what)
		}
		return nil
	}
}

// aclOwnToken allows any caller that has a token of its own, whatever it grants: the rule
// of calls about the caller's token (resolving it, trading it for a one-time token). refusal
// is the anonymous caller's message.
func aclOwnToken[Req any](refusal string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, _ *Req) error {
		if err := aclRequireEnabled(c.srv); err != nil {
			return err
		}
		// The actor, not the raw secret, says who called: the pipeline resolved the secret
		// already, and an empty one is the anonymous actor.
		if c.actor == nil || c.actor.Type == structs.ActorTypeAnonymous {
			return structs.PermissionDenied("%s", refusal)
		}
		return nil
	}
}

// aclTokenPolicyNames is the set of policies the caller's token holds, directly and through
// its roles; the anonymous caller holds the anonymous policy. A secret that resolved without
// being an ACL token (a workload identity) holds none it could name, and is refused as an
// unknown token.
func aclTokenPolicyNames(c *rpcCall) (map[string]bool, error) {
	if c.token == "" {
		return map[string]bool{structs.AnonymousPolicyName: true}, nil
	}
	store := c.srv.State()
	token, err := store.ACLTokenBySecretID(nil, c.token)
	if err != nil {
		return nil, err
	}
	if token == nil {
		return nil, structs.PermissionDenied("%s", structs.ErrTokenNotFound.Error())
	}
	names := map[string]bool{}
	for _, p := range token.Policies {
		names[p] = true
	}
	for _, link := range token.Roles {
		role, err := store.ACLRoleByID(nil, link.ID)
		if err != nil {
			return nil, err
		}
		if role != nil {
			for _, p := range role.Policies {
				names[p.Name] = true
			}
		}
	}
	return names, nil
}

// aclApplyToken applies a write that stores one token and answers with the token as stored
// (its hash and indexes set by the write) and the write's index.
func aclApplyToken(c *rpcCall, reply *structs.ACLTokenUpsertResponse, accessorID string, t structs.MessageType, msg any) error {
	index, err := c.srv.raftApply(t, msg)
	if err != nil {
		return err
	}
	stored, err := c.srv.State().ACLTokenByAccessorID(nil, accessorID)
	if err != nil {
		return err
	}
	reply.Tokens = []*structs.ACLToken{stored}
	reply.Index = index
	return nil
}
