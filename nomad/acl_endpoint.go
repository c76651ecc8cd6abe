package nomad

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// ACL is the ACL RPC endpoint: bootstrap, policies, tokens and roles.
type ACL struct {
	srv *Server
}

// aclBootstrapResetFile in the data dir holds the reset index an operator copied from the
// "already done" error to allow one more bootstrap.
const aclBootstrapResetFile = "acl-bootstrap-reset"

// BootstrapRequest asks for the first management token, optionally with a chosen secret.
type BootstrapRequest struct {
	BootstrapSecret string
	structs.WriteRequest
}

var aclBootstrap = write("ACL.Bootstrap", spec[BootstrapRequest, structs.ACLTokenUpsertResponse]{
	Caller: callerAnyone,
	// Bootstrap needs no token; a stale one the caller still sends must not refuse it.
	Prepare:   func(req *BootstrapRequest) error { req.AuthToken = ""; return nil },
	Authorize: aclEnabled[BootstrapRequest],
	Serve: func(c *rpcCall, req *BootstrapRequest, reply *structs.ACLTokenUpsertResponse) error {
		last := c.srv.State().ACLBootstrapIndex()
		var resetIndex uint64
		if last != 0 {
			resetIndex = aclReadBootstrapReset(c.srv)
			if resetIndex != last {
				return structs.BadRequest("ACL bootstrap already done (reset index: %d)", last)
			}
		}
		token, err := aclNewToken(&structs.ACLToken{Name: "Bootstrap Token", Type: structs.ACLManagementToken, Global: true}, req.BootstrapSecret)
		if err != nil {
			return err
		}
		return aclApplyToken(c, reply, token.AccessorID, structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{Token: token, ResetIndex: resetIndex})
	},
})

// Bootstrap creates the initial management token once; afterwards it fails with the reset
// index, which an operator writes into acl-bootstrap-reset to allow exactly one more.
func (a *ACL) Bootstrap(args *BootstrapRequest, reply *structs.ACLTokenUpsertResponse) error {
	return aclBootstrap.Call(a.srv, args, reply)
}

func aclReadBootstrapReset(s *Server) uint64 {
	if s.config.DataDir == "" {
		return 0
	}
	raw, err := os.ReadFile(filepath.Join(s.config.DataDir, aclBootstrapResetFile))
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		s.logger.Warn("ignoring unreadable ACL bootstrap reset file", "error", err)
		return 0
	}
	return n
}

// aclNewToken fixes a token's IDs and times before the Raft apply.
func aclNewToken(t *structs.ACLToken, secret string) (*structs.ACLToken, error) {
	var err error
	if t.AccessorID, err = uuid.GenerateUUID(); err != nil {
		return nil, err
	}
	if secret != "" {
		if _, err := uuid.ParseUUID(secret); err != nil {
			return nil, structs.BadRequest("invalid acl token")
		}
		t.SecretID = secret
	} else if t.SecretID, err = uuid.GenerateUUID(); err != nil {
		return nil, err
	}
	t.CreateTime = now().UTC()
	if t.ExpirationTTL != 0 {
		exp := t.CreateTime.Add(t.ExpirationTTL)
		t.ExpirationTime = &exp
	}
	t.SetHash()
	return t, nil
}

var aclUpsertPolicies = write("ACL.UpsertPolicies", spec[structs.ACLPolicyUpsertRequest, structs.GenericResponse]{
	Authorize: aclManagement[structs.ACLPolicyUpsertRequest]("write ACL policies"),
	Validate: eachValid(func(req *structs.ACLPolicyUpsertRequest) []*structs.ACLPolicy { return req.Policies },
		"must specify as least one policy", func(i int, p *structs.ACLPolicy) error {
			if !validPolicyName(p.Name) {
				return structs.BadRequest("policy %d invalid: invalid name %q", i, p.Name)
			}
			if len(p.Description) > 256 {
				return structs.BadRequest("policy %d invalid: description longer than 256", i)
			}
			if _, err := acl.Parse(p.Rules); err != nil {
				return structs.BadRequest("policy %d invalid: failed to parse rules: %v", i, err)
			}
			return nil
		}),
	Fix: func(c *rpcCall, req *structs.ACLPolicyUpsertRequest) {
		// The rules' JSON form is derived on read; storing what a caller sent could disagree.
		for _, p := range req.Policies {
			p.RulesJSON = nil
			p.SetHash()
		}
		req.Actor = c.actor
	},
	Message: structs.ACLPolicyUpsertRequestType,
})

// UpsertPolicies writes policies after checking their rules parse.
func (a *ACL) UpsertPolicies(args *structs.ACLPolicyUpsertRequest, reply *structs.GenericResponse) error {
	return aclUpsertPolicies.Call(a.srv, args, reply)
}

func validPolicyName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

var aclDeletePolicies = write("ACL.DeletePolicies", spec[structs.ACLPolicyDeleteRequest, structs.GenericResponse]{
	Authorize: aclManagement[structs.ACLPolicyDeleteRequest]("delete ACL policies"),
	Validate:  atLeastOne(func(req *structs.ACLPolicyDeleteRequest) int { return len(req.Names) }, "must specify as least one policy"),
	Fix:       func(c *rpcCall, req *structs.ACLPolicyDeleteRequest) { req.Actor = c.actor },
	Message:   structs.ACLPolicyDeleteRequestType,
})

// DeletePolicies deletes policies.
func (a *ACL) DeletePolicies(args *structs.ACLPolicyDeleteRequest, reply *structs.GenericResponse) error {
	return aclDeletePolicies.Call(a.srv, args, reply)
}

// PolicySpecificRequest reads one policy.
type PolicySpecificRequest struct {
	Name string
	structs.QueryOptions
}

// SinglePolicyResponse answers PolicySpecificRequest.
type SinglePolicyResponse struct {
	Policy *structs.ACLPolicy
	structs.QueryMeta
}

var aclGetPolicy = read("ACL.GetPolicy", spec[PolicySpecificRequest, SinglePolicyResponse]{
	Authorize: func(c *rpcCall, req *PolicySpecificRequest) error {
		if err := aclRequireEnabled(c.srv); err != nil {
			return err
		}
		if c.acl.IsManagement() {
			return nil
		}
		held, err := aclTokenPolicyNames(c)
		if err != nil {
			return err
		}
		if !held[req.Name] {
			return structs.PermissionDenied("management token or a token holding policy %q required", req.Name)
		}
		return nil
	},
	Serve: func(c *rpcCall, req *PolicySpecificRequest, reply *SinglePolicyResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			p, err := store.ACLPolicyByName(ws, req.Name)
			if err != nil {
				return 0, err
			}
			reply.Policy = nil
			if p != nil {
				cp := *p
				if parsed, err := acl.Parse(cp.Rules); err == nil {
					cp.RulesJSON = parsed
				}
				reply.Policy = &cp
			}
			return store.Index("acl_policy"), nil
		})
	},
})

// GetPolicy reads a policy: management, or a policy the caller's token holds.
func (a *ACL) GetPolicy(args *PolicySpecificRequest, reply *SinglePolicyResponse) error {
	return aclGetPolicy.Call(a.srv, args, reply)
}

// PolicyListResponse answers ListPolicies.
type PolicyListResponse struct {
	Policies []*structs.ACLPolicyListStub
	structs.QueryMeta
}

// aclListPolicies is open to every caller: the list holds only the policies the caller's
// token holds (all of them for management).
var aclListPolicies = read("ACL.ListPolicies", spec[structs.QueryOptions, PolicyListResponse]{
	Caller:    callerAnyone,
	Authorize: aclEnabled[structs.QueryOptions],
	Serve: func(c *rpcCall, req *structs.QueryOptions, reply *PolicyListResponse) error {
		mgmt := c.acl.IsManagement()
		held, err := aclTokenPolicyNames(c)
		if err != nil {
			return err
		}
		return pagedList(c.srv.blockingRPC, req, &reply.QueryMeta, &reply.Policies,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.ACLPolicy, error) {
				return store.ACLPolicies(ws, req.Prefix)
			},
			paginator.Order[*structs.ACLPolicy]{Key: func(p *structs.ACLPolicy) paginator.Key { return paginator.ByID(p.Name) }},
			func(p *structs.ACLPolicy) bool { return mgmt || held[p.Name] },
			func(p *structs.ACLPolicy) (*structs.ACLPolicyListStub, error) { return p.Stub(), nil },
			func(store *state.StateStore) uint64 { return store.Index("acl_policy") })
	},
})

// ListPolicies lists every policy for management, else the caller's own policies.
func (a *ACL) ListPolicies(args *structs.QueryOptions, reply *PolicyListResponse) error {
	return aclListPolicies.Call(a.srv, args, reply)
}
