package structs

import (
	"time"

	"github.com/hashicorp/go-bexpr"
)

// Binding rule bind types, as the official client spells them.
const (
	ACLBindingRuleBindTypeRole       = "role"
	ACLBindingRuleBindTypePolicy     = "policy"
	ACLBindingRuleBindTypeManagement = "management"
)

// ACLBindingRule maps the claims of a login through an auth method to what the new token
// gets: a role, a policy, or management. Selector is a go-bexpr expression over the mapped
// claims (value.<name>, list.<name>); BindName may interpolate ${value.<name>}.
type ACLBindingRule struct {
	ID          string
	Description string
	AuthMethod  string
	Selector    string
	BindType    string
	BindName    string
	CreateTime  time.Time
	ModifyTime  time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLBindingRuleListStub is the list form of a rule.
type ACLBindingRuleListStub struct {
	ID          string
	Description string
	AuthMethod  string
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the list form.
func (r *ACLBindingRule) Stub() *ACLBindingRuleListStub {
	return &ACLBindingRuleListStub{ID: r.ID, Description: r.Description, AuthMethod: r.AuthMethod, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex}
}

// Validate checks a rule's own fields; that its auth method exists is the store's check.
func (r *ACLBindingRule) Validate() error {
	if len(r.Description) > 256 {
		return BadRequest("invalid Description: longer than 256 characters")
	}
	if r.AuthMethod == "" {
		return BadRequest("missing AuthMethod")
	}
	switch r.BindType {
	case ACLBindingRuleBindTypeRole, ACLBindingRuleBindTypePolicy:
		if r.BindName == "" {
			return BadRequest("missing BindName: required for bind type %q", r.BindType)
		}
	case ACLBindingRuleBindTypeManagement:
		if r.BindName != "" {
			return BadRequest("invalid BindName: must be empty for bind type %q", r.BindType)
		}
	default:
		return BadRequest("invalid BindType %q: must be role, policy or management", r.BindType)
	}
	if r.Selector != "" {
		if _, err := bexpr.CreateEvaluator(r.Selector); err != nil {
			return BadRequest("invalid Selector: %v", err)
		}
	}
	return nil
}

// ACLBindingRuleUpsertRequest writes binding rules; the leader has fixed IDs and times.
type ACLBindingRuleUpsertRequest struct {
	BindingRules []*ACLBindingRule
	Actor        *Actor
	WriteRequest
}

// ACLBindingRuleUpsertResponse returns the rules as written.
type ACLBindingRuleUpsertResponse struct {
	BindingRules []*ACLBindingRule
	WriteMeta
}

// ACLBindingRuleDeleteRequest deletes binding rules by ID.
type ACLBindingRuleDeleteRequest struct {
	IDs   []string
	Actor *Actor
	WriteRequest
}

// ACLBindingRuleEvent is the payload of events on TopicACLBindingRule.
type ACLBindingRuleEvent struct {
	ACLBindingRule *ACLBindingRule
}
