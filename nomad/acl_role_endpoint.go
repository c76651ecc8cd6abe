package nomad

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// UpsertRoles creates (no ID) or updates roles.
func (a *ACL) UpsertRoles(args *structs.ACLRoleUpsertRequest, reply *structs.ACLRoleUpsertResponse) error {
	if done, err := a.srv.forward("ACL.UpsertRoles", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "write ACL roles")
	if err != nil {
		return err
	}
	if len(args.Roles) == 0 {
		return structs.BadRequest("must specify at least one role")
	}
	for _, r := range args.Roles {
		if !validPolicyName(r.Name) {
			return structs.BadRequest("invalid role name %q", r.Name)
		}
		if len(r.Policies) == 0 {
			return structs.BadRequest("role %q must have at least one policy", r.Name)
		}
		if r.ID == "" {
			if r.ID, err = uuid.GenerateUUID(); err != nil {
				return err
			}
		} else if existing, err := a.srv.State().ACLRoleByID(nil, r.ID); err != nil {
			return err
		} else if existing == nil {
			return structs.NewErrCode(404, "ACL role %q not found", r.ID)
		}
		r.SetHash()
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, err := a.srv.raftApply(structs.ACLRoleUpsertRequestType, args)
	if err != nil {
		return err
	}
	for _, r := range args.Roles {
		stored, err := a.srv.State().ACLRoleByID(nil, r.ID)
		if err != nil {
			return err
		}
		reply.Roles = append(reply.Roles, stored)
	}
	reply.Index = index
	return nil
}

// DeleteRoles deletes roles by ID.
func (a *ACL) DeleteRoles(args *structs.ACLRoleDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.forward("ACL.DeleteRoles", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "delete ACL roles")
	if err != nil {
		return err
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	reply.Index, err = a.srv.raftApply(structs.ACLRoleDeleteRequestType, args)
	return err
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

// GetRole reads a role: management, or a role linked to the caller's token.
func (a *ACL) GetRole(args *RoleSpecificRequest, reply *SingleRoleResponse) error {
	if done, err := a.srv.forwardRead("ACL.GetRole", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	aclObj, _, err := a.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	store := a.srv.State()
	var role *structs.ACLRole
	if args.ID != "" {
		role, err = store.ACLRoleByID(nil, args.ID)
	} else {
		role, err = store.ACLRoleByName(nil, args.Name)
	}
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() {
		if role == nil || !a.tokenHoldsRole(args.AuthToken, role.ID) {
			return structs.PermissionDenied("management token or a token linked to the role required")
		}
	}
	reply.Role = role
	reply.Index = store.Index("acl_roles")
	a.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

func (a *ACL) tokenHoldsRole(secret, roleID string) bool {
	t, err := a.srv.State().ACLTokenBySecretID(nil, secret)
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

// ListRoles lists roles (management only).
func (a *ACL) ListRoles(args *structs.QueryOptions, reply *RoleListResponse) error {
	if done, err := a.srv.forwardRead("ACL.ListRoles", args, args, reply); done {
		return err
	}
	if _, err := a.requireManagement(args.AuthToken, "list ACL roles"); err != nil {
		return err
	}
	return a.srv.blockingRPC(args, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		roles, err := store.ACLRoles(ws)
		if err != nil {
			return 0, err
		}
		reply.Roles, reply.NextToken, err = paginator.Page(roles, *args,
			paginator.Order[*structs.ACLRole]{Key: func(r *structs.ACLRole) paginator.Key { return paginator.ByID(r.ID) }},
			func(r *structs.ACLRole) bool { return args.Prefix == "" || strings.HasPrefix(r.ID, args.Prefix) },
			func(r *structs.ACLRole) (*structs.ACLRole, error) { return r, nil })
		if err != nil {
			return 0, err
		}
		return store.Index("acl_roles"), nil
	})
}
