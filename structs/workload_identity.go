package structs

import (
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/nomad/api"
)

// Workload identities are JWTs the servers sign with the active root key for one task of one
// allocation. A client fetches them for the allocations placed on its node (authenticated by
// the node's secret) and hands them to the task as a file and/or an environment variable;
// the task may then present one as its X-Nomad-Token. A JWT is a bearer secret: it never
// appears in a log line, an event, an error or an API answer other than the one to its node.

// WorkloadIdentityDefaultName is the name of the identity every task has, declared or not.
const WorkloadIdentityDefaultName = "default"

// WorkloadIdentityDefaultAudience is the audience of the default identity, as upstream.
const WorkloadIdentityDefaultAudience = "nomad.io"

// ActorTypeWorkloadIdentity is the actor type of a request authenticated by a workload
// identity; its Name is the identity's subject, its AccessorID empty (it is no token).
const ActorTypeWorkloadIdentity = "workload-identity"

// IdentityClaims are the claims of a workload identity, with upstream's names.
type IdentityClaims struct {
	Namespace    string `json:"nomad_namespace"`
	JobID        string `json:"nomad_job_id"`
	AllocationID string `json:"nomad_allocation_id"`
	TaskName     string `json:"nomad_task"`
	jwt.Claims
}

// IdentitySubject is upstream's subject format: region:namespace:job:group:task:identity.
func IdentitySubject(region, namespace, job, group, task, identity string) string {
	return fmt.Sprintf("%s:%s:%s:%s:%s:%s", region, namespace, job, group, task, identity)
}

// IdentityJobID is the job ID an allocation's identities carry: the parent's for a dispatched
// or periodic child, as upstream, so the children share their parent's variables.
func IdentityJobID(a *Allocation) string {
	if a.Job == nil {
		return a.JobID
	}
	return IdentityJobIDOf(a.Job)
}

// IdentityJobIDOf is the job ID the identities of job's tasks carry. A job names its parent
// only when the server launched it as a child: ParentID is refused from submitters, and the
// parent is honoured only together with the ID shape the server gives children
// ("<parent>/periodic-…", "<parent>/dispatch-…"), so a ParentID stored before submitters were
// refused cannot lend another job's identity (and every policy bound to it).
func IdentityJobIDOf(job *Job) string {
	if job.ParentID != "" && IsChildOf(job.ID, job.ParentID) {
		return job.ParentID
	}
	return job.ID
}

// IsChildOf reports whether id has the shape of a child the server launched from parent.
func IsChildOf(id, parent string) bool {
	rest, ok := strings.CutPrefix(id, parent)
	return ok && (strings.HasPrefix(rest, PeriodicLaunchSuffix) || strings.HasPrefix(rest, DispatchLaunchSuffix))
}

// TaskIdentities are the identities of a task: the default one (the task's unnamed identity
// block, or an implicit one that exposes nothing) first, then the named ones.
func TaskIdentities(task *api.Task) []*api.WorkloadIdentity {
	def := &api.WorkloadIdentity{Name: WorkloadIdentityDefaultName}
	if task.Identity != nil {
		d := *task.Identity
		def = &d
		if def.Name == "" {
			def.Name = WorkloadIdentityDefaultName
		}
	}
	out := []*api.WorkloadIdentity{def}
	for _, id := range task.Identities {
		if id != nil && id.Name != "" && id.Name != WorkloadIdentityDefaultName {
			out = append(out, id)
		}
	}
	return out
}

// LookupTaskIdentity finds a task's identity by name (the default one included).
func LookupTaskIdentity(task *api.Task, name string) *api.WorkloadIdentity {
	for _, id := range TaskIdentities(task) {
		if id.Name == name {
			return id
		}
	}
	return nil
}

// WorkloadIdentityRequest names one identity of one task of one allocation.
type WorkloadIdentityRequest struct {
	AllocID      string
	TaskName     string
	IdentityName string
}

// SignedWorkloadIdentity is a signed identity. JWT is a secret.
type SignedWorkloadIdentity struct {
	WorkloadIdentityRequest
	JWT string `codec:"JWT" json:"-"`
	// Expiration is the exp claim in Unix seconds, 0 when the identity does not expire.
	Expiration int64
}

// WorkloadIdentityRejection says why one identity was not signed: the allocation is gone or
// terminal, or the job no longer has the task or identity. The client stops asking.
type WorkloadIdentityRejection struct {
	WorkloadIdentityRequest
	Reason string
}

// Rejection reasons.
const (
	WIRejectionReasonMissingAlloc    = "allocation not found"
	WIRejectionReasonTerminalAlloc   = "allocation is terminal"
	WIRejectionReasonMissingTask     = "task not found"
	WIRejectionReasonMissingIdentity = "identity not found"
)

// AllocIdentitiesRequest asks for identities of allocations placed on NodeID; AuthToken is
// the node's secret.
type AllocIdentitiesRequest struct {
	NodeID     string
	Identities []*WorkloadIdentityRequest
	QueryOptions
}

// AllocIdentitiesResponse holds one signed identity or one rejection per identity asked for.
type AllocIdentitiesResponse struct {
	SignedIdentities []*SignedWorkloadIdentity
	Rejections       []*WorkloadIdentityRejection
	QueryMeta
}

// MaxIdentitiesPerRequest bounds one AllocIdentitiesRequest.
const MaxIdentitiesPerRequest = 1024
