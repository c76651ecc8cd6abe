package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) aclBootstrap(w http.ResponseWriter, r *http.Request) (any, error) {
	var args nomad.BootstrapRequest
	if err := decodeOptionalBody(r, &args); err != nil {
		return nil, err
	}
	args.WriteRequest = writeRequest(r)
	return write(s, w, "ACL.Bootstrap", &args, func(reply *structs.ACLTokenUpsertResponse) (any, error) {
		return reply.Tokens[0], nil
	})
}

// aclPolicySelf lists the caller's own policies; its literal pattern outranks
// /v1/acl/policy/{name}, so no policy can be read as "self" here.
func (s *HTTPServer) aclPolicySelf(w http.ResponseWriter, r *http.Request) (any, error) {
	args := queryOptions(r)
	return read(s, w, "ACL.GetPolicySelf", &args, func(reply *nomad.PolicyListResponse) (any, error) {
		return reply.Policies, nil
	})
}

func (s *HTTPServer) aclPolicyList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := queryOptions(r)
	return read(s, w, "ACL.ListPolicies", &args, func(reply *nomad.PolicyListResponse) (any, error) {
		return nonNil(reply.Policies), nil
	})
}

func (s *HTTPServer) aclPolicyRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := nomad.PolicySpecificRequest{Name: r.PathValue("name"), QueryOptions: queryOptions(r)}
	return read(s, w, "ACL.GetPolicy", &args, func(reply *nomad.SinglePolicyResponse) (any, error) {
		return found(reply.Policy, structs.NewErrCode(http.StatusNotFound, "ACL policy not found"))
	})
}

func (s *HTTPServer) aclPolicyWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	var policy structs.ACLPolicy
	if err := decodeBody(r, &policy); err != nil {
		return nil, err
	}
	if err := keyFromPath(r, "name", &policy.Name, structs.BadRequest("Policy name does not match request path")); err != nil {
		return nil, err
	}
	args := structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{&policy}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "ACL.UpsertPolicies", &args)
}

func (s *HTTPServer) aclPolicyDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLPolicyDeleteRequest{Names: []string{r.PathValue("name")}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "ACL.DeletePolicies", &args)
}

func (s *HTTPServer) aclTokenList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := queryOptions(r)
	return read(s, w, "ACL.ListTokens", &args, func(reply *nomad.TokenListResponse) (any, error) {
		return nonNil(reply.Tokens), nil
	})
}

// aclTokenWrite creates (PUT /v1/acl/token) or updates (PUT /v1/acl/token/:accessor) a token.
func (s *HTTPServer) aclTokenWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	var token structs.ACLToken
	if err := decodeBody(r, &token); err != nil {
		return nil, err
	}
	if err := keyFromPath(r, "accessor", &token.AccessorID, structs.BadRequest("Token accessor ID does not match request path")); err != nil {
		return nil, err
	}
	if r.PathValue("accessor") == "" {
		if token.AccessorID != "" {
			return nil, structs.BadRequest("AccessorID must be empty when creating a token")
		}
		// A new token's secret is never the caller's choice. Only an upload (a PUT naming an
		// accessor this cluster does not hold, with its secret) keeps the secret it brings;
		// an update of an existing token ignores it.
		token.SecretID = ""
	}
	args := structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{&token}, WriteRequest: writeRequest(r)}
	return write(s, w, "ACL.UpsertTokens", &args, func(reply *structs.ACLTokenUpsertResponse) (any, error) {
		return reply.Tokens[0], nil
	})
}

func (s *HTTPServer) aclTokenRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := nomad.TokenSpecificRequest{AccessorID: r.PathValue("accessor"), QueryOptions: queryOptions(r)}
	return read(s, w, "ACL.GetToken", &args, func(reply *nomad.SingleTokenResponse) (any, error) {
		return found(reply.Token, structs.NewErrCode(http.StatusNotFound, "ACL token not found"))
	})
}

func (s *HTTPServer) aclTokenSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	args := queryOptions(r)
	return read(s, w, "ACL.ResolveSelf", &args, func(reply *nomad.SingleTokenResponse) (any, error) {
		return reply.Token, nil
	})
}

func (s *HTTPServer) aclTokenDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLTokenDeleteRequest{AccessorIDs: []string{r.PathValue("accessor")}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "ACL.DeleteTokens", &args)
}

func (s *HTTPServer) aclRoleList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := queryOptions(r)
	return read(s, w, "ACL.ListRoles", &args, func(reply *nomad.RoleListResponse) (any, error) {
		return nonNil(reply.Roles), nil
	})
}

func (s *HTTPServer) aclRoleWrite(w http.ResponseWriter, r *http.Request) (any, error) {
	var role structs.ACLRole
	if err := decodeBody(r, &role); err != nil {
		return nil, err
	}
	if err := keyFromPath(r, "id", &role.ID, structs.BadRequest("ACL role ID does not match request path")); err != nil {
		return nil, err
	}
	if r.PathValue("id") == "" && role.ID != "" {
		return nil, structs.BadRequest("ID must be empty when creating an ACL role")
	}
	args := structs.ACLRoleUpsertRequest{Roles: []*structs.ACLRole{&role}, WriteRequest: writeRequest(r)}
	return write(s, w, "ACL.UpsertRoles", &args, func(reply *structs.ACLRoleUpsertResponse) (any, error) {
		return reply.Roles[0], nil
	})
}

func (s *HTTPServer) aclRoleRead(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.aclRoleGet(w, r, &nomad.RoleSpecificRequest{ID: r.PathValue("id"), QueryOptions: queryOptions(r)})
}

func (s *HTTPServer) aclRoleReadByName(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.aclRoleGet(w, r, &nomad.RoleSpecificRequest{Name: r.PathValue("name"), QueryOptions: queryOptions(r)})
}

func (s *HTTPServer) aclRoleGet(w http.ResponseWriter, _ *http.Request, args *nomad.RoleSpecificRequest) (any, error) {
	return read(s, w, "ACL.GetRole", args, func(reply *nomad.SingleRoleResponse) (any, error) {
		return found(reply.Role, structs.NewErrCode(http.StatusNotFound, "ACL role not found"))
	})
}

func (s *HTTPServer) aclRoleDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLRoleDeleteRequest{IDs: []string{r.PathValue("id")}, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "ACL.DeleteRoles", &args)
}

// aclOneTimeTokenCreate makes a one-time token standing for the caller's token.
func (s *HTTPServer) aclOneTimeTokenCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.OneTimeTokenUpsertRequest{WriteRequest: writeRequest(r)}
	return write(s, w, "ACL.UpsertOneTimeToken", &args, func(reply *structs.OneTimeTokenUpsertResponse) (any, error) {
		return map[string]any{"OneTimeToken": reply.OneTimeToken}, nil
	})
}

// aclOneTimeTokenExchange trades a one-time secret for the token it stands for.
func (s *HTTPServer) aclOneTimeTokenExchange(w http.ResponseWriter, r *http.Request) (any, error) {
	var body struct{ OneTimeSecretID string }
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.OneTimeTokenExchangeRequest{OneTimeSecretID: body.OneTimeSecretID, WriteRequest: writeRequest(r)}
	return write(s, w, "ACL.ExchangeOneTimeToken", &args, func(reply *structs.OneTimeTokenExchangeResponse) (any, error) {
		return map[string]any{"Token": reply.Token}, nil
	})
}
