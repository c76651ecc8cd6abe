package structs

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"time"
)

// Token types.
const (
	ACLClientToken     = "client"
	ACLManagementToken = "management"
)

// AnonymousTokenAccessorID identifies requests without a token when ACLs are on.
const AnonymousTokenAccessorID = "anonymous"

// AnonymousPolicyName is the policy whose rules apply to requests without a token.
const AnonymousPolicyName = "anonymous"

// ACLPolicy is a named set of rules.
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	// RulesJSON is the parsed form, filled on reads for clients that show it.
	RulesJSON   any `json:",omitempty"`
	JobACL      *JobACL
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// JobACL binds a policy to a job's workload identity.
type JobACL struct {
	Namespace string
	JobID     string
	Group     string
	Task      string
}

// ACLPolicyListStub is the list form of a policy.
type ACLPolicyListStub struct {
	Name        string
	Description string
	JobACL      *JobACL
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the list form.
func (p *ACLPolicy) Stub() *ACLPolicyListStub {
	return &ACLPolicyListStub{Name: p.Name, Description: p.Description, JobACL: p.JobACL, Hash: p.Hash, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex}
}

// SetHash computes the policy's content hash.
func (p *ACLPolicy) SetHash() {
	h := sha256.New()
	h.Write([]byte(p.Name))
	h.Write([]byte(p.Description))
	h.Write([]byte(p.Rules))
	p.Hash = h.Sum(nil)
}

// ACLToken grants the union of its policies (directly and through roles).
type ACLToken struct {
	AccessorID     string
	SecretID       string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	Hash           []byte
	CreateTime     time.Time
	ExpirationTime *time.Time
	ExpirationTTL  time.Duration
	CreateIndex    uint64
	ModifyIndex    uint64
}

// MarshalJSON writes the upstream wire shape: ExpirationTTL first, as a duration string ("" when
// unset), the way upstream and the official client write it. The outer field shadows the
// embedded one of the same name.
func (t *ACLToken) MarshalJSON() ([]byte, error) {
	type plain ACLToken
	return json.Marshal(&struct {
		ExpirationTTL string
		*plain
	}{ExpirationTTL: durationString(t.ExpirationTTL), plain: (*plain)(t)})
}

// UnmarshalJSON accepts ExpirationTTL as a duration string or as nanoseconds.
func (t *ACLToken) UnmarshalJSON(data []byte) error {
	type plain ACLToken
	aux := struct {
		*plain
		ExpirationTTL any
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	return decodeDuration("ExpirationTTL", aux.ExpirationTTL, &t.ExpirationTTL)
}

// ACLTokenRoleLink names a role a token holds.
type ACLTokenRoleLink struct {
	ID   string
	Name string
}

// IsExpired reports whether the token has expired at t.
func (t *ACLToken) IsExpired(at time.Time) bool {
	return t.ExpirationTime != nil && !t.ExpirationTime.IsZero() && !at.Before(*t.ExpirationTime)
}

// IsManagement reports whether the token is a management token.
func (t *ACLToken) IsManagement() bool { return t.Type == ACLManagementToken }

// SetHash computes the token's content hash (never of its secret alone).
func (t *ACLToken) SetHash() {
	h := sha256.New()
	h.Write([]byte(t.Name))
	h.Write([]byte(t.Type))
	for _, p := range t.Policies {
		h.Write([]byte(p))
	}
	for _, r := range t.Roles {
		h.Write([]byte(r.ID))
	}
	var b [1]byte
	if t.Global {
		b[0] = 1
	}
	h.Write(b[:])
	if t.ExpirationTime != nil {
		var ts [8]byte
		binary.BigEndian.PutUint64(ts[:], uint64(t.ExpirationTime.UnixNano()))
		h.Write(ts[:])
	}
	t.Hash = h.Sum(nil)
}

// Actor returns the token as an event/record actor: never its secret.
func (t *ACLToken) Actor() *Actor {
	return &Actor{AccessorID: t.AccessorID, Name: t.Name, Type: t.Type}
}

// Sanitized returns a copy without the SecretID.
func (t *ACLToken) Sanitized() *ACLToken {
	return copyWith(t, func(c *ACLToken) {
		c.SecretID = ""
	})
}

// ACLTokenListStub is the list form of a token; it has no SecretID field at all.
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Roles          []*ACLTokenRoleLink
	Global         bool
	Hash           []byte
	CreateTime     time.Time
	ExpirationTime *time.Time
	CreateIndex    uint64
	ModifyIndex    uint64
}

// Stub returns the list form.
func (t *ACLToken) Stub() *ACLTokenListStub {
	return &ACLTokenListStub{
		AccessorID: t.AccessorID, Name: t.Name, Type: t.Type, Policies: t.Policies, Roles: t.Roles,
		Global: t.Global, Hash: t.Hash, CreateTime: t.CreateTime, ExpirationTime: t.ExpirationTime,
		CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex,
	}
}

// ACLRole groups policies under a name tokens can link to.
type ACLRole struct {
	ID          string
	Name        string
	Description string
	Policies    []*ACLRolePolicyLink
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLRolePolicyLink names a policy of a role.
type ACLRolePolicyLink struct {
	Name string
}

// SetHash computes the role's content hash.
func (r *ACLRole) SetHash() {
	h := sha256.New()
	h.Write([]byte(r.Name))
	h.Write([]byte(r.Description))
	for _, p := range r.Policies {
		h.Write([]byte(p.Name))
	}
	r.Hash = h.Sum(nil)
}

// ACLPolicyUpsertRequest writes policies.
type ACLPolicyUpsertRequest struct {
	Policies []*ACLPolicy
	Actor    *Actor
	WriteRequest
}

// ACLPolicyDeleteRequest deletes policies by name.
type ACLPolicyDeleteRequest struct {
	Names []string
	Actor *Actor
	WriteRequest
}

// ACLTokenUpsertRequest writes tokens; the leader has fixed IDs, secrets and times.
type ACLTokenUpsertRequest struct {
	Tokens []*ACLToken
	Actor  *Actor
	WriteRequest
}

// ACLTokenUpsertResponse returns the tokens as written, secrets included.
type ACLTokenUpsertResponse struct {
	Tokens []*ACLToken
	WriteMeta
}

// ACLTokenDeleteRequest deletes tokens by AccessorID.
type ACLTokenDeleteRequest struct {
	AccessorIDs []string
	Actor       *Actor
	WriteRequest
}

// ACLTokenBootstrapRequest creates the first management token. ResetIndex is the bootstrap
// reset index the leader allowed; the FSM refuses if bootstrap has happened since.
type ACLTokenBootstrapRequest struct {
	Token      *ACLToken
	ResetIndex uint64
	WriteRequest
}

// ACLRoleUpsertRequest writes roles.
type ACLRoleUpsertRequest struct {
	Roles []*ACLRole
	Actor *Actor
	WriteRequest
}

// ACLRoleDeleteRequest deletes roles by ID.
type ACLRoleDeleteRequest struct {
	IDs   []string
	Actor *Actor
	WriteRequest
}

// ACLRoleUpsertResponse returns the roles as written.
type ACLRoleUpsertResponse struct {
	Roles []*ACLRole
	WriteMeta
}

// ACLPolicyEvent is the payload of events on TopicACLPolicy.
type ACLPolicyEvent struct {
	ACLPolicy *ACLPolicy
}

// ACLTokenEvent is the payload of events on TopicACLToken; the token never carries its secret.
type ACLTokenEvent struct {
	ACLToken *ACLToken
}

// ACLRoleEvent is the payload of events on TopicACLRole.
type ACLRoleEvent struct {
	ACLRole *ACLRole
}
