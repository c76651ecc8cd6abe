package nomad

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

var aclUpsertRoles = write("ACL.UpsertRoles", spec[structs.ACLRoleUpsertRequest, structs.ACLRoleUpsertResponse]{
	Authorize: aclManagement[structs.ACLRoleUpsertRequest]("write ACL roles"),
	Validate: eachValid(func(req *structs.ACLRoleUpsertRequest) []*structs.ACLRole { return req.Roles },
		"must specify at least one role", func(_ int, r *structs.ACLRole) error {
			if !validPolicyName(r.Name) {
				return structs.BadRequest("invalid role name %q", r.Name)
			}
			if len(r.Policies) == 0 {
				return structs.BadRequest("role %q must have at least one policy", r.Name)
			}
			return nil
		}),
	Serve: func(c *rpcCall, req *structs.ACLRoleUpsertRequest, reply *structs.ACLRoleUpsertResponse) error {
		store := c.srv.State()
		for _, r := range req.Roles {
			if _, err := aclRoles.claimID(store, &r.ID); err != nil {
				return err
			}
			r.SetHash()
		}
		req.Actor = c.actor
		var err error
		reply.Roles, reply.Index, err = aclRoles.applyAndRead(c, structs.ACLRoleUpsertRequestType, req,
			keysOf(req.Roles, func(r *structs.ACLRole) string { return r.ID }), asStored)
		return err
	},
})

// UpsertRoles creates (no ID) or updates roles.
func (a *ACL) UpsertRoles(args *structs.ACLRoleUpsertRequest, reply *structs.ACLRoleUpsertResponse) error {
	return aclUpsertRoles.Call(a.srv, args, reply)
}

var aclDeleteRoles = write("ACL.DeleteRoles", spec[structs.ACLRoleDeleteRequest, structs.GenericResponse]{
	Authorize: aclManagement[structs.ACLRoleDeleteRequest]("delete ACL roles"),
	Fix:       func(c *rpcCall, req *structs.ACLRoleDeleteRequest) { req.Actor = c.actor },
	Message:   structs.ACLRoleDeleteRequestType,
})

// DeleteRoles deletes roles by ID.
func (a *ACL) DeleteRoles(args *structs.ACLRoleDeleteRequest, reply *structs.GenericResponse) error {
	return aclDeleteRoles.Call(a.srv, args, reply)
}

// RoleSpecificRequest reads a role by ID or by name.
type RoleSpecificRequest struct {
	ID   string
	Name string
	structs.QueryOptions
}

// SingleRoleResponse answers RoleSpecificRequest.
type SingleRoleResponse struct {
	Role *structs.ACLRole
	structs.QueryMeta
}

// aclRoleOf is the role a request names, by ID or else by name; nil when there is none.
func aclRoleOf(store *state.StateStore, req *RoleSpecificRequest) (*structs.ACLRole, error) {
	if req.ID != "" {
		return store.ACLRoleByID(nil, req.ID)
	}
	return store.ACLRoleByName(nil, req.Name)
}

var aclGetRole = read("ACL.GetRole", spec[RoleSpecificRequest, SingleRoleResponse]{
	// Management reads any role; another token only a role linked to it, so that a missing
	// role and a role of someone else's look the same to it.
	Authorize: func(c *rpcCall, req *RoleSpecificRequest) error {
		if err := aclRequireEnabled(c.srv); err != nil {
			return err
		}
		if c.acl.IsManagement() {
			return nil
		}
		role, err := aclRoleOf(c.srv.State(), req)
		if err != nil {
			return err
		}
		if role == nil || !aclTokenHoldsRole(c, role.ID) {
			return structs.PermissionDenied("management token or a token linked to the role required")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *RoleSpecificRequest, reply *SingleRoleResponse) error {
		store := c.srv.State()
		role, err := aclRoleOf(store, req)
		if err != nil {
			return err
		}
		reply.Role = role
		reply.Index = store.Index("acl_roles")
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// GetRole reads a role: management, or a role linked to the caller's token.
func (a *ACL) GetRole(args *RoleSpecificRequest, reply *SingleRoleResponse) error {
	return aclGetRole.Call(a.srv, args, reply)
}

// aclTokenHoldsRole says whether the caller's token links the role.
func aclTokenHoldsRole(c *rpcCall, roleID string) bool {
	if c.token == "" {
		return false
	}
	t, err := c.srv.State().ACLTokenBySecretID(nil, c.token)
	if err != nil || t == nil {
		return false
	}
	for _, link := range t.Roles {
		if link.ID == roleID {
			return true
		}
	}
	return false
}

// RoleListResponse answers ListRoles.
type RoleListResponse struct {
	Roles []*structs.ACLRole
	structs.QueryMeta
}

var aclListRoles = read("ACL.ListRoles", spec[structs.QueryOptions, RoleListResponse]{
	Authorize: aclManagement[structs.QueryOptions]("list ACL roles"),
	Serve: func(c *rpcCall, req *structs.QueryOptions, reply *RoleListResponse) error {
		return pagedList(c.srv.blockingRPC, req, &reply.QueryMeta, &reply.Roles,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.ACLRole, error) {
				return store.ACLRoles(ws)
			},
			paginator.Order[*structs.ACLRole]{Key: func(r *structs.ACLRole) paginator.Key { return paginator.ByID(r.ID) }},
			func(r *structs.ACLRole) bool { return req.Prefix == "" || strings.HasPrefix(r.ID, req.Prefix) },
			func(r *structs.ACLRole) (*structs.ACLRole, error) { return r, nil },
			func(store *state.StateStore) uint64 { return store.Index("acl_roles") })
	},
})

// ListRoles lists roles (management only).
func (a *ACL) ListRoles(args *structs.QueryOptions, reply *RoleListResponse) error {
	return aclListRoles.Call(a.srv, args, reply)
}
