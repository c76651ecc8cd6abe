package nomad

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

var aclUpsertBindingRules = write("ACL.UpsertBindingRules", spec[structs.ACLBindingRuleUpsertRequest, structs.ACLBindingRuleUpsertResponse]{
	Authorize: aclManagement[structs.ACLBindingRuleUpsertRequest]("write ACL binding rules"),
	Validate: eachValid(func(req *structs.ACLBindingRuleUpsertRequest) []*structs.ACLBindingRule { return req.BindingRules },
		"must specify at least one binding rule", func(_ int, r *structs.ACLBindingRule) error {
			if r == nil {
				return structs.BadRequest("missing binding rule")
			}
			return r.Validate()
		}),
	Serve: func(c *rpcCall, req *structs.ACLBindingRuleUpsertRequest, reply *structs.ACLBindingRuleUpsertResponse) error {
		store := c.srv.State()
		ts := now().UTC()
		for _, r := range req.BindingRules {
			if m, err := store.ACLAuthMethodByName(nil, r.AuthMethod); err != nil {
				return err
			} else if m == nil {
				return structs.BadRequest("invalid AuthMethod: ACL auth-method %q not found", r.AuthMethod)
			}
			existing, err := aclBindingRules.claimID(store, &r.ID)
			if err != nil {
				return err
			}
			if existing != nil && existing.AuthMethod != r.AuthMethod {
				return structs.BadRequest("invalid AuthMethod: a binding rule cannot move to another auth-method")
			}
			r.CreateTime, r.ModifyTime = ts, ts
			r.CreateIndex, r.ModifyIndex = 0, 0
		}
		req.Actor = c.actor
		var err error
		reply.BindingRules, reply.Index, err = aclBindingRules.applyAndRead(c, structs.ACLBindingRuleUpsertRequestType, req,
			keysOf(req.BindingRules, func(r *structs.ACLBindingRule) string { return r.ID }), asStored)
		return err
	},
})

// UpsertBindingRules creates (no ID) or updates binding rules (management only).
func (a *ACL) UpsertBindingRules(args *structs.ACLBindingRuleUpsertRequest, reply *structs.ACLBindingRuleUpsertResponse) error {
	return aclUpsertBindingRules.Call(a.srv, args, reply)
}

var aclDeleteBindingRules = write("ACL.DeleteBindingRules", spec[structs.ACLBindingRuleDeleteRequest, structs.GenericResponse]{
	Authorize: aclManagement[structs.ACLBindingRuleDeleteRequest]("delete ACL binding rules"),
	Check:     aclDeleteChecked(aclBindingRules, func(req *structs.ACLBindingRuleDeleteRequest) []string { return req.IDs }),
	Fix:       func(c *rpcCall, req *structs.ACLBindingRuleDeleteRequest) { req.Actor = c.actor },
	Message:   structs.ACLBindingRuleDeleteRequestType,
})

// DeleteBindingRules deletes binding rules by ID (management only).
func (a *ACL) DeleteBindingRules(args *structs.ACLBindingRuleDeleteRequest, reply *structs.GenericResponse) error {
	return aclDeleteBindingRules.Call(a.srv, args, reply)
}

// BindingRuleSpecificRequest reads one binding rule by ID.
type BindingRuleSpecificRequest struct {
	ID string
	structs.QueryOptions
}

// SingleBindingRuleResponse answers BindingRuleSpecificRequest.
type SingleBindingRuleResponse struct {
	BindingRule *structs.ACLBindingRule
	structs.QueryMeta
}

var aclGetBindingRule = read("ACL.GetBindingRule", spec[BindingRuleSpecificRequest, SingleBindingRuleResponse]{
	Authorize: aclManagement[BindingRuleSpecificRequest]("read ACL binding rules"),
	Serve: func(c *rpcCall, req *BindingRuleSpecificRequest, reply *SingleBindingRuleResponse) error {
		return blockingGet(c, &req.QueryOptions, &reply.QueryMeta,
			func(ws memdb.WatchSet, store *state.StateStore) (*structs.ACLBindingRule, error) {
				return store.ACLBindingRuleByID(ws, req.ID)
			},
			func(r *structs.ACLBindingRule) { reply.BindingRule = r }, nil, "acl_binding_rules")
	},
})

// GetBindingRule reads a binding rule (management only).
func (a *ACL) GetBindingRule(args *BindingRuleSpecificRequest, reply *SingleBindingRuleResponse) error {
	return aclGetBindingRule.Call(a.srv, args, reply)
}

// BindingRuleListResponse answers ListBindingRules.
type BindingRuleListResponse struct {
	BindingRules []*structs.ACLBindingRuleListStub
	structs.QueryMeta
}

var aclListBindingRules = read("ACL.ListBindingRules", spec[structs.QueryOptions, BindingRuleListResponse]{
	Authorize: aclManagement[structs.QueryOptions]("list ACL binding rules"),
	Serve: func(c *rpcCall, req *structs.QueryOptions, reply *BindingRuleListResponse) error {
		return pagedList(c.srv.blockingRPC, req, &reply.QueryMeta, &reply.BindingRules,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.ACLBindingRule, error) {
				return store.ACLBindingRules(ws)
			},
			paginator.Order[*structs.ACLBindingRule]{Key: func(r *structs.ACLBindingRule) paginator.Key { return paginator.ByID(r.ID) }},
			func(r *structs.ACLBindingRule) bool { return req.Prefix == "" || strings.HasPrefix(r.ID, req.Prefix) },
			func(r *structs.ACLBindingRule) (*structs.ACLBindingRuleListStub, error) { return r.Stub(), nil },
			func(store *state.StateStore) uint64 { return store.Index("acl_binding_rules") })
	},
})

// ListBindingRules lists binding rule stubs (management only).
func (a *ACL) ListBindingRules(args *structs.QueryOptions, reply *BindingRuleListResponse) error {
	return aclListBindingRules.Call(a.srv, args, reply)
}
