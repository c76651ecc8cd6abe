package nomad

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// UpsertAuthMethods creates or updates auth methods (management only).
func (a *ACL) UpsertAuthMethods(args *structs.ACLAuthMethodUpsertRequest, reply *structs.ACLAuthMethodUpsertResponse) error {
	if done, err := a.srv.forward("ACL.UpsertAuthMethods", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "write ACL auth-methods")
	if err != nil {
		return err
	}
	if len(args.AuthMethods) == 0 {
		return structs.BadRequest("must specify at least one auth-method")
	}
	store := a.srv.State()
	ts := now().UTC()
	for _, m := range args.AuthMethods {
		if m == nil {
			return structs.BadRequest("missing auth-method")
		}
		if m.TokenNameFormat == "" {
			m.TokenNameFormat = structs.ACLAuthMethodDefaultTokenNameFormat
		}
		if err := m.Validate(); err != nil {
			return err
		}
		// A login's token lives MaxTokenTTL: the bounds of every token TTL apply to it.
		if lo, hi := a.srv.config.ACLTokenMinExpirationTTL, a.srv.config.ACLTokenMaxExpirationTTL; m.MaxTokenTTL < lo || m.MaxTokenTTL > hi {
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
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, err := a.srv.raftApply(structs.ACLAuthMethodUpsertRequestType, args)
	if err != nil {
		return err
	}
	for _, m := range args.AuthMethods {
		stored, err := a.srv.State().ACLAuthMethodByName(nil, m.Name)
		if err != nil {
			return err
		}
		reply.AuthMethods = append(reply.AuthMethods, stored.Sanitized())
	}
	reply.Index = index
	return nil
}

// DeleteAuthMethods deletes auth methods by name, with their binding rules (management only).
func (a *ACL) DeleteAuthMethods(args *structs.ACLAuthMethodDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.forward("ACL.DeleteAuthMethods", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "delete ACL auth-methods")
	if err != nil {
		return err
	}
	store := a.srv.State()
	for _, name := range args.Names {
		m, err := store.ACLAuthMethodByName(nil, name)
		if err != nil {
			return err
		}
		if m == nil {
			return structs.NewErrCode(404, "ACL auth-method %q not found", name)
		}
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	reply.Index, err = a.srv.raftApply(structs.ACLAuthMethodDeleteRequestType, args)
	return err
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

// GetAuthMethod reads an auth method (management only), its secrets redacted.
func (a *ACL) GetAuthMethod(args *AuthMethodSpecificRequest, reply *SingleAuthMethodResponse) error {
	if done, err := a.srv.forwardRead("ACL.GetAuthMethod", &args.QueryOptions, args, reply); done {
		return err
	}
	if _, err := a.requireManagement(args.AuthToken, "read ACL auth-methods"); err != nil {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		m, err := store.ACLAuthMethodByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.AuthMethod = m.Sanitized()
		return store.Index("acl_auth_methods"), nil
	})
}

// AuthMethodListResponse answers ListAuthMethods.
type AuthMethodListResponse struct {
	AuthMethods []*structs.ACLAuthMethodListStub
	structs.QueryMeta
}

// ListAuthMethods lists auth method stubs. It asks for no token, as upstream: a user about to
// log in has none, and a stub names only the method, its type and whether it is the default.
func (a *ACL) ListAuthMethods(args *structs.QueryOptions, reply *AuthMethodListResponse) error {
	if done, err := a.srv.forwardRead("ACL.ListAuthMethods", args, args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	return a.srv.blockingRPC(args, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		methods, err := store.ACLAuthMethods(ws)
		if err != nil {
			return 0, err
		}
		reply.AuthMethods, reply.NextToken, err = paginator.Page(methods, *args,
			paginator.Order[*structs.ACLAuthMethod]{Key: func(m *structs.ACLAuthMethod) paginator.Key { return paginator.ByID(m.Name) }},
			func(m *structs.ACLAuthMethod) bool {
				return args.Prefix == "" || strings.HasPrefix(m.Name, args.Prefix)
			},
			func(m *structs.ACLAuthMethod) (*structs.ACLAuthMethodListStub, error) { return m.Stub(), nil })
		if err != nil {
			return 0, err
		}
		return store.Index("acl_auth_methods"), nil
	})
}
