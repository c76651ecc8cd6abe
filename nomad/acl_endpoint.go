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

func (a *ACL) requireEnabled() error {
	if !a.srv.config.ACLEnabled {
		return structs.BadRequest("%s", structs.ErrACLDisabled.Error())
	}
	return nil
}

// requireManagement resolves the caller and insists on a management token.
func (a *ACL) requireManagement(secret, what string) (*structs.Actor, error) {
	if err := a.requireEnabled(); err != nil {
		return nil, err
	}
	aclObj, actor, err := a.srv.resolveACL(secret)
	if err != nil {
		return nil, err
	}
	if !aclObj.IsManagement() {
		return nil, structs.PermissionDenied("management token required to %s", what)
	}
	return actor, nil
}

// AuthorizeAgentRead checks that the caller may read this agent's configuration and
// state (GET /v1/agent/self): upstream's `agent { policy = "read" }`. With ACLs disabled
// every caller may. The HTTP agent has no ACL of its own, so it asks the server here.
func (a *ACL) AuthorizeAgentRead(secret string) error {
	aclObj, _, err := a.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if !aclObj.AllowAgentRead() {
		return structs.PermissionDenied("agent read required")
	}
	return nil
}

// AuthorizeAgentWrite checks that the caller may profile this agent (/debug/pprof/):
// `agent { policy = "write" }` or management, the rule upstream applies to its agent profiling
// endpoints. With ACLs disabled every caller may; enable_debug is then the only gate.
func (a *ACL) AuthorizeAgentWrite(secret string) error {
	aclObj, _, err := a.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if !aclObj.AllowAgentWrite() {
		return structs.PermissionDenied("agent write required")
	}
	return nil
}

// AuthorizeNodeRead checks that the caller may list the cluster's members
// (GET /v1/agent/members), which upstream gates on `node { policy = "read" }`, not on agent
// read.
func (a *ACL) AuthorizeNodeRead(secret string) error {
	aclObj, _, err := a.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if !aclObj.AllowNodeRead() {
		return structs.PermissionDenied("node read required")
	}
	return nil
}

// AuthorizeNodeWrite checks that the caller holds `node { policy = "write" }` (or management):
// upstream's rule for changing a node's dynamic metadata.
func (a *ACL) AuthorizeNodeWrite(secret string) error {
	aclObj, _, err := a.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if !aclObj.AllowNodeWrite() {
		return structs.PermissionDenied("node write required")
	}
	return nil
}

// AuthorizeAllocExec checks that the caller may run a command in a task of an allocation in
// namespace: alloc-exec, or, when the task's driver has no filesystem isolation (nodeExec,
// as raw_exec), alloc-node-exec instead, since such a command runs on the node itself. These
// are upstream's rules. The client that runs the task enforces nothing itself: the agent
// asks here before it starts the command.
func (a *ACL) AuthorizeAllocExec(secret, namespace string, nodeExec bool) error {
	aclObj, _, err := a.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	capability := acl.NamespaceCapabilityAllocExec
	if nodeExec {
		capability = acl.NamespaceCapabilityAllocNodeExec
	}
	if !aclObj.AllowNamespaceOperation(namespace, capability) {
		return structs.PermissionDenied("%s capability required in namespace %q", capability, namespace)
	}
	return nil
}

// AuthorizeNamespaceCapability checks that the caller holds capability in namespace ("" is
// the default namespace): the one decision of the routes that act on an allocation through
// the client that runs it (alloc-lifecycle for signal and restart, read-job for its stats).
func (a *ACL) AuthorizeNamespaceCapability(secret, namespace, capability string) error {
	aclObj, _, err := a.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	if !aclObj.AllowNamespaceOperation(namespace, capability) {
		return structs.PermissionDenied("%s capability required in namespace %q", capability, namespace)
	}
	return nil
}

// AuthorizeReadLogs checks that the caller may read the logs of the tasks of an allocation
// in namespace: read-logs, or read-fs, which upstream lets read them too.
func (a *ACL) AuthorizeReadLogs(secret, namespace string) error {
	aclObj, _, err := a.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	if !aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityReadLogs) &&
		!aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityReadFS) {
		return structs.PermissionDenied("%s capability required in namespace %q", acl.NamespaceCapabilityReadLogs, namespace)
	}
	return nil
}

// AuthorizeReadFS checks that the caller may read the files of an allocation in namespace
// (the /v1/client/fs routes other than logs): read-fs.
func (a *ACL) AuthorizeReadFS(secret, namespace string) error {
	aclObj, _, err := a.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if namespace == "" {
		namespace = structs.DefaultNamespace
	}
	if !aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityReadFS) {
		return structs.PermissionDenied("%s capability required in namespace %q", acl.NamespaceCapabilityReadFS, namespace)
	}
	return nil
}

// BootstrapRequest asks for the first management token, optionally with a chosen secret.
type BootstrapRequest struct {
	BootstrapSecret string
	structs.WriteRequest
}

// Bootstrap creates the initial management token once; afterwards it fails with the reset
// index, which an operator writes into acl-bootstrap-reset to allow exactly one more.
func (a *ACL) Bootstrap(args *BootstrapRequest, reply *structs.ACLTokenUpsertResponse) error {
	if done, err := a.srv.forward("ACL.Bootstrap", args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	last := a.srv.State().ACLBootstrapIndex()
	var resetIndex uint64
	if last != 0 {
		resetIndex = a.readBootstrapReset()
		if resetIndex != last {
			return structs.BadRequest("ACL bootstrap already done (reset index: %d)", last)
		}
	}
	token, err := a.newToken(&structs.ACLToken{Name: "Bootstrap Token", Type: structs.ACLManagementToken, Global: true}, args.BootstrapSecret)
	if err != nil {
		return err
	}
	index, err := a.srv.raftApply(structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapRequest{Token: token, ResetIndex: resetIndex})
	if err != nil {
		return err
	}
	stored, err := a.srv.State().ACLTokenByAccessorID(nil, token.AccessorID)
	if err != nil {
		return err
	}
	reply.Tokens = []*structs.ACLToken{stored}
	reply.Index = index
	return nil
}

func (a *ACL) readBootstrapReset() uint64 {
	if a.srv.config.DataDir == "" {
		return 0
	}
	raw, err := os.ReadFile(filepath.Join(a.srv.config.DataDir, aclBootstrapResetFile))
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		a.srv.logger.Warn("ignoring unreadable ACL bootstrap reset file", "error", err)
		return 0
	}
	return n
}

// newToken fixes a token's IDs and times before the Raft apply.
func (a *ACL) newToken(t *structs.ACLToken, secret string) (*structs.ACLToken, error) {
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

// UpsertPolicies writes policies after checking their rules parse.
func (a *ACL) UpsertPolicies(args *structs.ACLPolicyUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.forward("ACL.UpsertPolicies", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "write ACL policies")
	if err != nil {
		return err
	}
	if len(args.Policies) == 0 {
		return structs.BadRequest("must specify as least one policy")
	}
	for i, p := range args.Policies {
		if !validPolicyName(p.Name) {
			return structs.BadRequest("policy %d invalid: invalid name %q", i, p.Name)
		}
		if len(p.Description) > 256 {
			return structs.BadRequest("policy %d invalid: description longer than 256", i)
		}
		if _, err := acl.Parse(p.Rules); err != nil {
			return structs.BadRequest("policy %d invalid: failed to parse rules: %v", i, err)
		}
		p.RulesJSON = nil
		p.SetHash()
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	reply.Index, err = a.srv.raftApply(structs.ACLPolicyUpsertRequestType, args)
	return err
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

// DeletePolicies deletes policies.
func (a *ACL) DeletePolicies(args *structs.ACLPolicyDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := a.srv.forward("ACL.DeletePolicies", args, reply); done {
		return err
	}
	actor, err := a.requireManagement(args.AuthToken, "delete ACL policies")
	if err != nil {
		return err
	}
	if len(args.Names) == 0 {
		return structs.BadRequest("must specify as least one policy")
	}
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	reply.Index, err = a.srv.raftApply(structs.ACLPolicyDeleteRequestType, args)
	return err
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

// tokenPolicyNames returns the policies a token holds directly and through roles.
func (a *ACL) tokenPolicyNames(secret string) (map[string]bool, bool, error) {
	if secret == "" {
		return map[string]bool{structs.AnonymousPolicyName: true}, false, nil
	}
	// resolveACL makes the same not-found, expired and constant-time checks as every other
	// endpoint before the token's policy names are read.
	if _, _, err := a.srv.resolveACL(secret); err != nil {
		return nil, false, err
	}
	store := a.srv.State()
	token, err := store.ACLTokenBySecretID(nil, secret)
	if err != nil {
		return nil, false, err
	}
	if token == nil {
		return nil, false, structs.PermissionDenied("%s", structs.ErrTokenNotFound.Error())
	}
	names := map[string]bool{}
	for _, p := range token.Policies {
		names[p] = true
	}
	for _, link := range token.Roles {
		role, err := store.ACLRoleByID(nil, link.ID)
		if err != nil {
			return nil, false, err
		}
		if role != nil {
			for _, p := range role.Policies {
				names[p.Name] = true
			}
		}
	}
	return names, token.IsManagement(), nil
}

// GetPolicy reads a policy: management, or a policy the caller's token holds.
func (a *ACL) GetPolicy(args *PolicySpecificRequest, reply *SinglePolicyResponse) error {
	if done, err := a.srv.forwardRead("ACL.GetPolicy", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	held, mgmt, err := a.tokenPolicyNames(args.AuthToken)
	if err != nil {
		return err
	}
	if !mgmt && !held[args.Name] {
		return structs.PermissionDenied("management token or a token holding policy %q required", args.Name)
	}
	return a.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		p, err := store.ACLPolicyByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.Policy = nil
		if p != nil {
			c := *p
			if parsed, err := acl.Parse(c.Rules); err == nil {
				c.RulesJSON = parsed
			}
			reply.Policy = &c
		}
		return store.Index("acl_policy"), nil
	})
}

// PolicyListResponse answers ListPolicies.
type PolicyListResponse struct {
	Policies []*structs.ACLPolicyListStub
	structs.QueryMeta
}

// ListPolicies lists every policy for management, else the caller's own policies.
func (a *ACL) ListPolicies(args *structs.QueryOptions, reply *PolicyListResponse) error {
	if done, err := a.srv.forwardRead("ACL.ListPolicies", args, args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	held, mgmt, err := a.tokenPolicyNames(args.AuthToken)
	if err != nil {
		return err
	}
	return a.srv.blockingRPC(args, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.ACLPolicies(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Policies, reply.NextToken, err = paginator.Page(all, *args,
			paginator.Order[*structs.ACLPolicy]{Key: func(p *structs.ACLPolicy) paginator.Key { return paginator.ByID(p.Name) }},
			func(p *structs.ACLPolicy) bool { return mgmt || held[p.Name] },
			func(p *structs.ACLPolicy) (*structs.ACLPolicyListStub, error) { return p.Stub(), nil })
		if err != nil {
			return 0, err
		}
		return store.Index("acl_policy"), nil
	})
}
