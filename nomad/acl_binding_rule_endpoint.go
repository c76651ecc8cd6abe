package nomad

import (
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// UpsertBindingRules creates (no ID) or updates binding rules (management only).
func (a *ACL) UpsertBindingRules(args *structs.ACLBindingRuleUpsertRequest, reply *structs.ACLBindingRuleUpsertResponse) error {
	if done, err := a.srv.forward("ACL.UpsertBindingRules", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "write ACL binding rules")
	if err != nil {
		return err
	}
	if len(args.BindingRules) == 0 {
		return structs.BadRequest("must specify at least one binding rule")
	}
	store := a.srv.State()
	ts := now().UTC()
	for _, r := range args.BindingRules {
		if r == nil {
			return structs.BadRequest("missing binding rule")
		}
		if err := r.Validate(); err != nil {
			return err
		}
		if m, err := store.ACLAuthMethodByName(nil, r.AuthMethod); err != nil {
			return err
		} else if m == nil {
			return structs.BadRequest("invalid AuthMethod: ACL auth-method %q not found", r.AuthMethod)
		}
		if r.ID == "" {
			if r.ID, err = uuid.GenerateUUID(); err != nil {
				return err
			}
		} else if existing, err := store.ACLBindingRuleByID(nil, r.ID); err != nil {
			return err
		} else if existing == nil {
			return structs.NewErrCode(404, "ACL binding rule %q not found", r.ID)
		} else if existing.AuthMethod != r.AuthMethod {
			return structs.BadRequest("invalid AuthMethod: a binding rule cannot move to another auth-method")
		}
		r.CreateTime, r.ModifyTime = ts, ts
		r.CreateIndex, r.ModifyIndex = 0, 0
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, err := a.srv.raftApply(structs.ACLBindingRuleUpsertRequestType, args)
	if err != nil {
		return err
	}
	for _, r := range args.BindingRules {
		stored, err := a.srv.State().ACLBindingRuleByID(nil, r.ID)
		if err != nil {
			return err
		}
		reply.BindingRules = append(reply.BindingRules, stored)
	}
	reply.Index = index
	return nil
}

// DeleteBindingRules deletes binding rules by ID (management only).
func (a *ACL) DeleteBindingRules(args *structs.ACLBindingRuleDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.forward("ACL.DeleteBindingRules", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "delete ACL binding rules")
	if err != nil {
		return err
	}
	for _, id := range args.IDs {
		r, err := a.srv.State().ACLBindingRuleByID(nil, id)
		if err != nil {
			return err
		}
		if r == nil {
			return structs.NewErrCode(404, "ACL binding rule %q not found", id)
		}
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	reply.Index, err = a.srv.raftApply(structs.ACLBindingRuleDeleteRequestType, args)
	return err
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

// GetBindingRule reads a binding rule (management only).
func (a *ACL) GetBindingRule(args *BindingRuleSpecificRequest, reply *SingleBindingRuleResponse) error {
	if done, err := a.srv.forwardRead("ACL.GetBindingRule", &args.QueryOptions, args, reply); done {
		return err
	}
	if _, err := a.requireManagement(args.AuthToken, "read ACL binding rules"); err != nil {
		return err
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		r, err := store.ACLBindingRuleByID(ws, args.ID)
		if err != nil {
			return 0, err
		}
		reply.BindingRule = r
		return store.Index("acl_binding_rules"), nil
	})
}

// BindingRuleListResponse answers ListBindingRules.
type BindingRuleListResponse struct {
	BindingRules []*structs.ACLBindingRuleListStub
	structs.QueryMeta
}

// ListBindingRules lists binding rule stubs (management only).
func (a *ACL) ListBindingRules(args *structs.QueryOptions, reply *BindingRuleListResponse) error {
	if done, err := a.srv.forwardRead("ACL.ListBindingRules", args, args, reply); done {
		return err
	}
	if _, err := a.requireManagement(args.AuthToken, "list ACL binding rules"); err != nil {
		return err
	}
	return a.srv.blockingRPC(args, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		rules, err := store.ACLBindingRules(ws)
		if err != nil {
			return 0, err
		}
		reply.BindingRules, reply.NextToken, err = paginator.Page(rules, *args,
			paginator.Order[*structs.ACLBindingRule]{Key: func(r *structs.ACLBindingRule) paginator.Key { return paginator.ByID(r.ID) }},
			func(r *structs.ACLBindingRule) bool { return args.Prefix == "" || strings.HasPrefix(r.ID, args.Prefix) },
			func(r *structs.ACLBindingRule) (*structs.ACLBindingRuleListStub, error) { return r.Stub(), nil })
		if err != nil {
			return 0, err
		}
		return store.Index("acl_binding_rules"), nil
	})
}
