package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Scaling is the scaling policy RPC endpoint. Policies are written only as part of their
// job (state/scaling_policies.go); this endpoint reads them.
type Scaling struct {
	srv *Server
}

// assignScalingPolicyIDs gives every scaling block of job the ID of the stored policy of its
// group, or a new one, before the job's write enters Raft: the FSM derives the rows and must
// not make IDs. An ID in the submitted job is ignored, so a caller cannot point its block at
// another job's policy. The groups are copied first: job may be a stored version (revert).
func (s *Server) assignScalingPolicyIDs(job *structs.Job) error {
	existing, err := s.State().ScalingPolicies(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	ids := map[string]string{}
	for _, p := range existing {
		ids[p.Group] = p.ID
	}
	job.CopyTaskGroups()
	for _, tg := range job.TaskGroups {
		if tg == nil || tg.Scaling == nil || tg.Name == nil {
			continue
		}
		sc := *tg.Scaling
		sc.ID = ids[*tg.Name]
		if sc.ID == "" {
			if sc.ID, err = uuid.GenerateUUID(); err != nil {
				return err
			}
		}
		tg.Scaling = &sc
	}
	return nil
}

// scalingListPolicies lists the policies of the namespaces the caller may list them in.
var scalingListPolicies = read("Scaling.ListPolicies", spec[structs.ScalingPolicyListRequest, structs.ScalingPolicyListResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.ScalingPolicyListRequest],
	Authorize: scalingListPoliciesRule,
	Validate: func(req *structs.ScalingPolicyListRequest) error {
		if req.Type != "" && req.Type != structs.ScalingPolicyTypeHorizontal {
			return structs.BadRequest("invalid type %q: only %q policies exist", req.Type, structs.ScalingPolicyTypeHorizontal)
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.ScalingPolicyListRequest, reply *structs.ScalingPolicyListResponse) error {
		return pagedList(c.srv.blockingRPC, &req.QueryOptions, &reply.QueryMeta, &reply.Policies,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.ScalingPolicy, error) {
				return store.ScalingPolicies(ws, req.Namespace, req.Job)
			},
			paginator.Order[*structs.ScalingPolicy]{Key: func(p *structs.ScalingPolicy) paginator.Key { return paginator.ByID(p.ID) }},
			func(p *structs.ScalingPolicy) bool { return allowListScalingPolicies(c.acl, p.Namespace) },
			func(p *structs.ScalingPolicy) (*structs.ScalingPolicyListStub, error) { return p.Stub(), nil },
			func(store *state.StateStore) uint64 { return max(store.Index(tableScalingPoliciesName), 1) })
	},
})

// ListPolicies lists the policies of the namespaces the caller may list them in.
func (sc *Scaling) ListPolicies(args *structs.ScalingPolicyListRequest, reply *structs.ScalingPolicyListResponse) error {
	return scalingListPolicies.Call(sc.srv, args, reply)
}

// tableScalingPoliciesName is the state table whose index answers policy reads.
const tableScalingPoliciesName = "scaling_policy"

// allowListScalingPolicies: list-scaling-policies, or list-jobs with read-job (what reading
// the jobs the policies come from takes), as upstream.
func allowListScalingPolicies(aclObj *acl.ACL, namespace string) bool {
	return aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityListScalingPolicies) ||
		(aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityListJobs) &&
			aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityReadJob))
}

// scalingGetPolicy reads one policy; Policy is nil when unknown. The caller needs
// read-scaling-policy (or read-job) in the policy's namespace; for an unknown ID, in the
// request's namespace.
var scalingGetPolicy = read("Scaling.GetPolicy", spec[structs.ScalingPolicySpecificRequest, structs.SingleScalingPolicyResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.ScalingPolicySpecificRequest],
	Authorize: scalingGetPolicyRule,
	Serve: func(c *rpcCall, req *structs.ScalingPolicySpecificRequest, reply *structs.SingleScalingPolicyResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			reply.Policy = nil
			p, err := store.ScalingPolicyByID(ws, req.ID)
			if err != nil {
				return 0, err
			}
			ns := req.Namespace
			if p != nil {
				ns = p.Namespace
			}
			// Again on every pass: a blocking read may be answered with a policy that appeared
			// (in another namespace) while it waited.
			if !scalingPolicyReadable(c, ns) {
				return 0, structs.PermissionDenied("read-scaling-policy capability required in namespace %q", ns)
			}
			reply.Policy = p
			return max(store.Index(tableScalingPoliciesName), 1), nil
		})
	},
})

// GetPolicy reads one policy.
func (sc *Scaling) GetPolicy(args *structs.ScalingPolicySpecificRequest, reply *structs.SingleScalingPolicyResponse) error {
	return scalingGetPolicy.Call(sc.srv, args, reply)
}
