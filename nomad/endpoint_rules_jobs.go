package nomad

import (
	"strings"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

// Rules and preparations shared by the Job and Scaling rows.

// jobQueryDefaultNamespace is the Prepare of a job read: a request that names no namespace
// reads the default one, and the rule and the read must agree on which.
func jobQueryDefaultNamespace[Req any](req *Req) error {
	opts := any(req).(queryRequest).QueryOpts()
	if opts.Namespace == "" {
		opts.Namespace = structs.DefaultNamespace
	}
	return nil
}

// jobWriteDefaultNamespace is the Prepare of a job write whose request names the job by ID:
// the default namespace when it names none.
func jobWriteDefaultNamespace[Req any](write func(*Req) *structs.WriteRequest) func(*Req) error {
	return func(req *Req) error {
		if w := write(req); w.Namespace == "" {
			w.Namespace = structs.DefaultNamespace
		}
		return nil
	}
}

// jobNamespaceOrDefault is the namespace a rule checks: the zero request (which Prepare has
// not filled) acts on the default namespace, as every call naming none does.
func jobNamespaceOrDefault(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}

// jobAnyCapIn allows a caller holding any one of caps in ns, refusing with a 403 that names
// them all ("submit-job or revert-job capability required in namespace ...").
func jobAnyCapIn(c *rpcCall, ns string, caps ...string) error {
	ns = jobNamespaceOrDefault(ns)
	for _, capability := range caps {
		if c.acl.AllowNamespaceOperation(ns, capability) {
			return nil
		}
	}
	return structs.PermissionDenied("%s capability required in namespace %q", strings.Join(caps, " or "), ns)
}

// jobWriteRule allows a job write by any one of caps in the namespace the request names.
func jobWriteRule[Req any](write func(*Req) *structs.WriteRequest, caps ...string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error {
		return jobAnyCapIn(c, write(req).Namespace, caps...)
	}
}

// jobReadRule allows a read of one namespace's jobs to a caller holding read-job there.
func jobReadRule[Req any](c *rpcCall, req *Req) error {
	return jobAnyCapIn(c, any(req).(queryRequest).QueryOpts().Namespace, acl.NamespaceCapabilityReadJob)
}

// jobListingRule allows a listing that may span every namespace ("*"): across namespaces the
// caller is let in and the listing keeps only the namespaces it holds capability in; in one
// namespace the capability is needed there.
func jobListingRule[Req any](capability string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error {
		if any(req).(queryRequest).QueryOpts().Namespace == structs.AllNamespacesSentinel {
			return nil
		}
		return jobAnyCapIn(c, any(req).(queryRequest).QueryOpts().Namespace, capability)
	}
}

// jobVisibleIn says whether a listing across namespaces shows namespace ns to the caller.
func jobVisibleIn(c *rpcCall, opts *structs.QueryOptions, capability, ns string) bool {
	return opts.Namespace != structs.AllNamespacesSentinel || c.acl.AllowNamespaceOperation(ns, capability)
}

// jobSubmittedNamespace is the namespace a request carrying a job spec acts on: the job's own
// (canonicalized by Prepare), else the request's.
func jobSubmittedNamespace(job *structs.Job, requestNamespace string) string {
	if job != nil && job.Namespace != "" {
		return job.Namespace
	}
	return jobNamespaceOrDefault(requestNamespace)
}

// jobPrepareSubmitted is the Prepare of a call carrying a job spec: without a job there is
// nothing to authorise against, and the spec is canonicalized (its namespace defaulted) before
// the rule reads it.
func jobPrepareSubmitted(job *structs.Job) error {
	if job == nil {
		return structs.BadRequest("Job must be specified")
	}
	job.Canonicalize()
	return nil
}

// jobRegisterRule is Job.Register's authorisation: submit-job (or register-job) in the job's
// namespace, registration not closed to the caller by the scheduler configuration, and no
// right put behind the job's identities that the caller lacks (no capability laundering
// through workload identities; job_identity_checks.go).
func jobRegisterRule(c *rpcCall, req *structs.JobRegisterRequest) error {
	ns := jobSubmittedNamespace(req.Job, req.Namespace)
	if !c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilitySubmitJob) &&
		!c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityRegisterJob) {
		return structs.PermissionDenied("submit-job capability required in namespace %q", ns)
	}
	if err := c.srv.registrationRejected(c.acl); err != nil {
		return err
	}
	if req.Job == nil {
		return nil
	}
	return c.srv.checkJobIdentity(c.acl, req.Job)
}

// jobDeregisterRule: a purge needs purge-job (submit-job alone cannot purge, unlike upstream);
// a stop needs submit-job, deregister-job or purge-job.
func jobDeregisterRule(c *rpcCall, req *structs.JobDeregisterRequest) error {
	ns := jobNamespaceOrDefault(req.Namespace)
	if req.Purge {
		if !c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityPurgeJob) {
			return structs.PermissionDenied("purge-job capability required in namespace %q", ns)
		}
		return nil
	}
	if !c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilitySubmitJob) &&
		!c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityDeregisterJob) &&
		!c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityPurgeJob) {
		return structs.PermissionDenied("submit-job, deregister-job or purge-job capability required in namespace %q", ns)
	}
	return nil
}

// jobTagVersionRule: naming a version needs submit-job or tag-job-version, as upstream;
// removing a name needs purge-job (ours): a tagged version is kept whatever the version limit,
// so untagging it lets the next registrations erase it, a removal of history like a purge.
func jobTagVersionRule(c *rpcCall, req *structs.JobTagRequest) error {
	if req.Unset {
		return jobAnyCapIn(c, req.Namespace, acl.NamespaceCapabilityPurgeJob)
	}
	return jobAnyCapIn(c, req.Namespace, acl.NamespaceCapabilitySubmitJob, acl.NamespaceCapabilityTagJobVersion)
}

// jobRegistrationRule is a rule for writes that make new job versions or children (dispatch,
// scale), which the scheduler configuration can close to all but management tokens.
func jobRegistrationRule[Req any](write func(*Req) *structs.WriteRequest, caps ...string) func(*rpcCall, *Req) error {
	capRule := jobWriteRule(write, caps...)
	return func(c *rpcCall, req *Req) error {
		if err := capRule(c, req); err != nil {
			return err
		}
		return c.srv.registrationRejected(c.acl)
	}
}

// jobValidEvalPriority refuses an evaluation priority outside the job priority range (0 keeps
// the job's own).
func jobValidEvalPriority(priority int) error {
	if priority != 0 && (priority < structs.JobMinPriority || priority > structs.JobMaxPriority) {
		return structs.BadRequest("eval priority must be between [%d, %d]", structs.JobMinPriority, structs.JobMaxPriority)
	}
	return nil
}

// scalingPolicyReadable: read-scaling-policy, or read-job, in ns.
func scalingPolicyReadable(c *rpcCall, ns string) bool {
	return c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadScalingPolicy) ||
		c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob)
}

// scalingGetPolicyRule allows reading a policy to a caller who may read policies in the
// policy's namespace, or, for an ID not known (yet: the read may block until it is), in the
// request's. The read checks again on every pass, since the answer may be a policy that
// appeared while it waited.
func scalingGetPolicyRule(c *rpcCall, req *structs.ScalingPolicySpecificRequest) error {
	ns := jobNamespaceOrDefault(req.Namespace)
	if req.ID != "" {
		p, err := c.srv.State().ScalingPolicyByID(nil, req.ID)
		if err != nil {
			return err
		}
		if p != nil {
			ns = p.Namespace
		}
	}
	if !scalingPolicyReadable(c, ns) {
		return structs.PermissionDenied("read-scaling-policy capability required in namespace %q", ns)
	}
	return nil
}

// scalingListPoliciesRule: list-scaling-policies, or list-jobs with read-job (what reading the
// jobs the policies come from takes), as upstream; across namespaces ("*") the listing keeps
// the namespaces the caller may list policies in.
func scalingListPoliciesRule(c *rpcCall, req *structs.ScalingPolicyListRequest) error {
	ns := jobNamespaceOrDefault(req.Namespace)
	if ns == structs.AllNamespacesSentinel || allowListScalingPolicies(c.acl, ns) {
		return nil
	}
	return structs.PermissionDenied("list-scaling-policies capability required in namespace %q", ns)
}
