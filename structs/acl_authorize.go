package structs

import "github.com/hashicorp/nomad/api"

// ACLAuthorizeRequest asks the servers whether the caller's token allows one of the decisions
// an agent makes before serving something itself (its own configuration, an allocation's
// files or logs, an exec session): the agent holds no ACL state, so the servers decide.
type ACLAuthorizeRequest struct {
	// Check names the decision: one of the ACLCheck constants.
	Check string
	// Namespace is the namespace of the allocation or job acted on ("" is the default).
	Namespace string
	// Capability is the namespace capability ACLCheckNamespaceCapability asks for.
	Capability string
	// AllocID, for ACLCheckAllocExec, is the allocation whose identities the caller must
	// cover.
	AllocID string
	// NodeExec, for ACLCheckAllocExec: the task's driver has no filesystem isolation.
	NodeExec bool
	QueryOptions
}

// ACLAuthorizeResponse is the answer of an allowed check; a refused one is a 403.
type ACLAuthorizeResponse struct {
	QueryMeta
}

// The decisions ACL.Authorize makes.
const (
	ACLCheckAgentRead           = "agent-read"
	ACLCheckAgentWrite          = "agent-write"
	ACLCheckNodeRead            = "node-read"
	ACLCheckNodeWrite           = "node-write"
	ACLCheckAllocExec           = "alloc-exec"
	ACLCheckNamespaceCapability = "namespace-capability"
	ACLCheckReadLogs            = "read-logs"
	ACLCheckReadFS              = "read-fs"
	ACLCheckParseJob            = "parse-job"
	ACLCheckSnapshotRestore     = "snapshot-restore"
)

// StatusRequest asks a server about the cluster itself (its leader, peers, regions).
type StatusRequest struct {
	QueryOptions
}

// StatusResponse answers StatusRequest: Leader for Status.Leader, Peers for Status.Peers,
// Regions for Status.Regions.
type StatusResponse struct {
	Leader  string
	Peers   []string
	Regions []string
	QueryMeta
}

// StatusMembersResponse answers Status.Members: the gossip pool of the server asked, in the
// shape of /v1/agent/members.
type StatusMembersResponse struct {
	Members *api.ServerMembers
	QueryMeta
}
