package nomad

import (
	"errors"

	"github.com/nomadfork/nomad/nomad/authmethod"
	"github.com/nomadfork/nomad/structs"
)

// aclLogin exchanges a JWT for a new ACL token through a JWT auth method. It asks for no ACL
// token: the login token is the credential. The method's binding rules decide what the new
// token gets; a login no rule binds is refused.
var aclLogin = write("ACL.Login", spec[structs.ACLLoginRequest, structs.ACLTokenUpsertResponse]{
	Caller: callerAnyone,
	// A stale or expired ACL token the caller still sends is what logging in replaces; it
	// must not refuse the login.
	Prepare:   func(req *structs.ACLLoginRequest) error { req.AuthToken = ""; return nil },
	Authorize: aclEnabled[structs.ACLLoginRequest],
	Validate: func(req *structs.ACLLoginRequest) error {
		if req.AuthMethodName == "" {
			return structs.BadRequest("missing AuthMethodName")
		}
		if req.LoginToken == "" {
			return structs.BadRequest("missing LoginToken")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.ACLLoginRequest, reply *structs.ACLTokenUpsertResponse) error {
		store := c.srv.State()
		method, err := store.ACLAuthMethodByName(nil, req.AuthMethodName)
		if err != nil {
			return err
		}
		if method == nil {
			return structs.NewErrCode(404, "ACL auth-method %q not found", req.AuthMethodName)
		}
		if method.Type != structs.ACLAuthMethodTypeJWT {
			return structs.BadRequest("invalid AuthMethodName: auth-method %q is of type %s; login takes a JWT method", method.Name, method.Type)
		}
		claims, err := authmethod.VerifyJWT(method, req.LoginToken, now())
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
		if token, err = aclNewToken(token, ""); err != nil {
			return err
		}
		actor := &structs.Actor{Name: "login via auth-method " + method.Name, Type: token.Type}
		return aclApplyToken(c, reply, token.AccessorID, structs.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{token}, Actor: actor})
	},
})

// Login exchanges a JWT for a new ACL token.
func (a *ACL) Login(args *structs.ACLLoginRequest, reply *structs.ACLTokenUpsertResponse) error {
	return aclLogin.Call(a.srv, args, reply)
}
