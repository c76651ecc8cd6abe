package nomad

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

var aclUpsertAuthMethods = write("ACL.UpsertAuthMethods", spec[structs.ACLAuthMethodUpsertRequest, structs.ACLAuthMethodUpsertResponse]{
	Prepare: func(req *structs.ACLAuthMethodUpsertRequest) error {
		for _, m := range req.AuthMethods {
			if m != nil && m.TokenNameFormat == "" {
				m.TokenNameFormat = structs.ACLAuthMethodDefaultTokenNameFormat
			}
		}
		return nil
	},
	Authorize: aclManagement[structs.ACLAuthMethodUpsertRequest]("write ACL auth-methods"),
	Validate: eachValid(func(req *structs.ACLAuthMethodUpsertRequest) []*structs.ACLAuthMethod { return req.AuthMethods },
		"must specify at least one auth-method", func(_ int, m *structs.ACLAuthMethod) error {
			if m == nil {
				return structs.BadRequest("missing auth-method")
			}
			return m.Validate()
		}),
	Serve: func(c *rpcCall, req *structs.ACLAuthMethodUpsertRequest, reply *structs.ACLAuthMethodUpsertResponse) error {
		store := c.srv.State()
		ts := now().UTC()
		for _, m := range req.AuthMethods {
			// A login's token lives MaxTokenTTL: the bounds of every token TTL apply to it.
			if lo, hi := c.srv.config.ACLTokenMinExpirationTTL, c.srv.config.ACLTokenMaxExpirationTTL; m.MaxTokenTTL < lo || m.MaxTokenTTL > hi {
				return structs.BadRequest("invalid MaxTokenTTL %s: must be between %s and %s", m.MaxTokenTTL, lo, hi)
			}
			existing, err := store.ACLAuthMethodByName(nil, m.Name)
			if err != nil {
				return err
			}
			m.KeepSecretsOf(existing)
			if m.Default {
				// The store checks this again in the FSM; checking here keeps the common refusal
				// out of the Raft log.
				other, err := store.ACLDefaultAuthMethod(m.Type)
				if err != nil {
					return err
				}
				if other != nil && other.Name != m.Name {
					return structs.BadRequest("invalid Default: auth method %q is already the default of type %s", other.Name, m.Type)
				}
			}
			m.CreateTime, m.ModifyTime = ts, ts
			m.CreateIndex, m.ModifyIndex = 0, 0
		}
		req.Actor = c.actor
		var err error
		reply.AuthMethods, reply.Index, err = aclAuthMethods.applyAndRead(c, structs.ACLAuthMethodUpsertRequestType, req,
			keysOf(req.AuthMethods, func(m *structs.ACLAuthMethod) string { return m.Name }), (*structs.ACLAuthMethod).Sanitized)
		return err
	},
})

// UpsertAuthMethods creates or updates auth methods (management only).
func (a *ACL) UpsertAuthMethods(args *structs.ACLAuthMethodUpsertRequest, reply *structs.ACLAuthMethodUpsertResponse) error {
	return aclUpsertAuthMethods.Call(a.srv, args, reply)
}

var aclDeleteAuthMethods = write("ACL.DeleteAuthMethods", spec[structs.ACLAuthMethodDeleteRequest, structs.GenericResponse]{
	Authorize: aclManagement[structs.ACLAuthMethodDeleteRequest]("delete ACL auth-methods"),
	Check:     aclDeleteChecked(aclAuthMethods, func(req *structs.ACLAuthMethodDeleteRequest) []string { return req.Names }),
	Fix:       func(c *rpcCall, req *structs.ACLAuthMethodDeleteRequest) { req.Actor = c.actor },
	Message:   structs.ACLAuthMethodDeleteRequestType,
})

// DeleteAuthMethods deletes auth methods by name, with their binding rules (management only).
func (a *ACL) DeleteAuthMethods(args *structs.ACLAuthMethodDeleteRequest, reply *structs.GenericResponse) error {
	return aclDeleteAuthMethods.Call(a.srv, args, reply)
}

// AuthMethodSpecificRequest reads one auth method by name.
type AuthMethodSpecificRequest struct {
	Name string
	structs.QueryOptions
}

// SingleAuthMethodResponse answers AuthMethodSpecificRequest; secrets are redacted.
type SingleAuthMethodResponse struct {
	AuthMethod *structs.ACLAuthMethod
	structs.QueryMeta
}

var aclGetAuthMethod = read("ACL.GetAuthMethod", spec[AuthMethodSpecificRequest, SingleAuthMethodResponse]{
	Authorize: aclManagement[AuthMethodSpecificRequest]("read ACL auth-methods"),
	Serve: func(c *rpcCall, req *AuthMethodSpecificRequest, reply *SingleAuthMethodResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.ACLAuthMethod, error) {
				return store.ACLAuthMethodByName(ws, req.Name)
			},
			func(m *structs.ACLAuthMethod) { reply.AuthMethod = m.Sanitized() }, nil, "acl_auth_methods")
	},
})

// GetAuthMethod reads an auth method (management only), its secrets redacted.
func (a *ACL) GetAuthMethod(args *AuthMethodSpecificRequest, reply *SingleAuthMethodResponse) error {
	return aclGetAuthMethod.Call(a.srv, args, reply)
}

// AuthMethodListResponse answers ListAuthMethods.
type AuthMethodListResponse struct {
	AuthMethods []*structs.ACLAuthMethodListStub
	structs.QueryMeta
}

// aclListAuthMethods asks for no token, as upstream: a user about to log in has none, and a
// stub names only the method, its type and whether it is the default.
var aclListAuthMethods = read("ACL.ListAuthMethods", spec[structs.QueryOptions, AuthMethodListResponse]{
	Caller: callerAnyone,
	// A stale token left in the CLI's environment must not keep a user from logging in.
	Prepare:   func(req *structs.QueryOptions) error { req.AuthToken = ""; return nil },
	Authorize: aclEnabled[structs.QueryOptions],
	Serve: func(c *rpcCall, req *structs.QueryOptions, reply *AuthMethodListResponse) error {
		return pagedList(c.srv.blockingRPC, req, &reply.QueryMeta, &reply.AuthMethods,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.ACLAuthMethod, error) {
				return store.ACLAuthMethods(ws)
			},
			paginator.Order[*structs.ACLAuthMethod]{Key: func(m *structs.ACLAuthMethod) paginator.Key { return paginator.ByID(m.Name) }},
			func(m *structs.ACLAuthMethod) bool {
				return req.Prefix == "" || strings.HasPrefix(m.Name, req.Prefix)
			},
			func(m *structs.ACLAuthMethod) (*structs.ACLAuthMethodListStub, error) { return m.Stub(), nil },
			func(store *state.StateStore) uint64 { return store.Index("acl_auth_methods") })
	},
})

// ListAuthMethods lists auth method stubs, to anyone.
func (a *ACL) ListAuthMethods(args *structs.QueryOptions, reply *AuthMethodListResponse) error {
	return aclListAuthMethods.Call(a.srv, args, reply)
}
