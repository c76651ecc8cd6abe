package nomad

import (
	"errors"

	"github.com/nomadfork/nomad/nomad/authmethod"
	"github.com/nomadfork/nomad/structs"
)

// Login exchanges a JWT for a new ACL token through a JWT auth method. It asks for no ACL
// token: the login token is the credential. The method's binding rules decide what the new
// token gets; a login no rule binds is refused.
func (a *ACL) Login(args *structs.ACLLoginRequest, reply *structs.ACLTokenUpsertResponse) error {
	if done, err := a.srv.forward("ACL.Login", args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	if args.AuthMethodName == "" {
		return structs.BadRequest("missing AuthMethodName")
	}
	if args.LoginToken == "" {
		return structs.BadRequest("missing LoginToken")
	}
	store := a.srv.State()
	method, err := store.ACLAuthMethodByName(nil, args.AuthMethodName)
	if err != nil {
		return err
	}
	if method == nil {
		return structs.NewErrCode(404, "ACL auth-method %q not found", args.AuthMethodName)
	}
	if method.Type != structs.ACLAuthMethodTypeJWT {
		return structs.BadRequest("invalid AuthMethodName: auth-method %q is of type %s; login takes a JWT method", method.Name, method.Type)
	}
	claims, err := authmethod.VerifyJWT(method, args.LoginToken, now())
	if err != nil {
		if errors.Is(err, authmethod.ErrInvalidLoginToken) {
			return structs.PermissionDenied("%v", err)
		}
		return err
	}
	vars, err := authmethod.MapClaims(method.Config, claims)
	if err != nil {
		return structs.PermissionDenied("invalid login token: %v", err)
	}
	rules, err := store.ACLBindingRulesByAuthMethod(nil, method.Name)
	if err != nil {
		return err
	}
	bound, err := authmethod.Bind(rules, vars)
	if err != nil {
		return err
	}
	token := &structs.ACLToken{
		Name:          "token created via login: " + method.Name,
		Type:          structs.ACLClientToken,
		Global:        method.TokenLocality == structs.ACLAuthMethodTokenLocalityGlobal,
		ExpirationTTL: method.MaxTokenTTL,
	}
	if bound.Management {
		token.Type = structs.ACLManagementToken
	} else {
		token.Policies = bound.Policies
		for _, name := range bound.Roles {
			// A rule may name a role that does not exist (yet); it grants nothing.
			role, err := store.ACLRoleByName(nil, name)
			if err != nil {
				return err
			}
			if role != nil {
				token.Roles = append(token.Roles, &structs.ACLTokenRoleLink{ID: role.ID, Name: role.Name})
			}
		}
		if len(token.Policies) == 0 && len(token.Roles) == 0 {
			return structs.PermissionDenied("no binding rule of auth-method %q matches the login", method.Name)
		}
	}
	if token, err = a.newToken(token, ""); err != nil {
		return err
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	actor := &structs.Actor{Name: "login via auth-method " + method.Name, Type: token.Type}
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
