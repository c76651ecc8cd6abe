package nomad

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// What a job's identity is, and who may give it, is decided here for every path that makes
// a job version: register, plan, revert and restore. The job register path is shared with
// other checks, so each path calls in with one line.

// checkRegisterIdentity is Job.Register's check, once the caller is authorized: the
// request sets nothing only the server sets, and the job's identities hold nothing the caller
// lacks.
func (s *Server) checkRegisterIdentity(caller *acl.ACL, args *structs.JobRegisterRequest) error {
	if err := checkSubmittedRegister(args); err != nil {
		return err
	}
	return s.checkJobIdentity(caller, args.Job)
}

// checkSubmittedRegister refuses a register request that sets what only the server sets.
// A job's link to its parent decides whose identity its tasks carry (structs.IdentityJobIDOf)
// and so which job-bound policies they hold; it is made by the server when it launches a
// periodic or dispatched child and never taken from a submitter. The official client's
// `job run` of a file sends these fields empty, so refusing them costs it nothing, and a 400
// naming the field tells a tool that echoes a read job back what to drop.
func checkSubmittedRegister(args *structs.JobRegisterRequest) error {
	if err := checkSubmittedJob(args.Job); err != nil {
		return err
	}
	// Filled by the leader for scale and periodic launches, which reach the log without
	// passing through Register; from a caller they would forge a scaling event or a launch.
	if args.Scaling != nil {
		return structs.BadRequest("Scaling is set by the server only; use the scale endpoint")
	}
	if args.PeriodicLaunch != nil {
		return structs.BadRequest("PeriodicLaunch is set by the server only; use the periodic force endpoint")
	}
	return nil
}

// checkSubmittedJob refuses a submitted job (register or plan) that sets a field only the
// server sets for the children it launches.
func checkSubmittedJob(job *structs.Job) error {
	switch {
	case job.ParentID != "":
		return serverOwnedField("ParentID")
	case job.Dispatched:
		return serverOwnedField("Dispatched")
	case job.DispatchIdempotencyToken != "":
		return serverOwnedField("DispatchIdempotencyToken")
	}
	return nil
}

func serverOwnedField(name string) error {
	return structs.BadRequest("%s is set by the server only, on the children it launches from periodic and parameterized jobs; a submitted job must leave it empty", name)
}

// keepServerOwned gives a reverted version the parent link of the job as it stands: a revert
// brings back a spec, never a parent, so a version stored before submitters were refused
// cannot bring back a forged one, and a dispatched child's revert stays its parent's child.
func keepServerOwned(job, current *structs.Job) {
	job.ParentID = current.ParentID
	job.Dispatched = current.Dispatched
	job.DispatchIdempotencyToken = current.DispatchIdempotencyToken
}

// Issue 31: binding a policy to a job's identity is an operator's act, so putting code behind
// that identity must need the same power. A job version is refused when its tasks' identities
// would hold, through job-bound policies or the variables every identity reads, a right the
// caller's token lacks. Management tokens (and ACLs off) pass.

// checkJobIdentity refuses registering job (a register, an update, a revert or a restore)
// when its tasks' identities would hold a right caller lacks. Every task counts, whether or
// not it exposes its identity: a task's identity is fetched for what the client does on its
// behalf too, and an exposure is one spec change away.
func (s *Server) checkJobIdentity(caller *acl.ACL, job *structs.Job) error {
	var tasks []taskRef
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			tasks = append(tasks, taskRef{group: deref(tg.Name), task: t.Name})
		}
	}
	held, err := s.identityBeyond(s.State(), caller, job.Namespace, structs.IdentityJobIDOf(job), tasks)
	if err != nil || held == "" {
		return err
	}
	return structs.PermissionDenied("job %s's identity would hold %s; your token does not", job.ID, held)
}

// checkExecIdentity refuses a command in an allocation whose task identities hold a right
// caller lacks: the command runs beside the identity's token (NOMAD_TOKEN, secrets/), so the
// shell would hand it over. Every task of the group counts: a command on a driver without
// isolation reaches every task's secrets.
func (s *Server) checkExecIdentity(caller *acl.ACL, alloc *structs.Allocation) error {
	var tasks []taskRef
	if alloc.Job != nil {
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
			for _, t := range tg.Tasks {
				tasks = append(tasks, taskRef{group: alloc.TaskGroup, task: t.Name})
			}
		}
	}
	held, err := s.identityBeyond(s.State(), caller, alloc.Namespace, structs.IdentityJobID(alloc), tasks)
	if err != nil || held == "" {
		return err
	}
	return structs.PermissionDenied("allocation %s: job %s's identity holds %s; your token does not", alloc.ID, alloc.JobID, held)
}

type taskRef struct{ group, task string }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// identityBeyond words the first right, in policy name order, that the identities of tasks
// of job jobID in ns hold and caller lacks ("purge-job through policy janitor"); "" when
// there is none. The implicit variables of an identity count only where a variable exists:
// every job reads nomad/jobs/<job>, and refusing every submitter without variable rights
// would protect nothing that is not there.
func (s *Server) identityBeyond(store *state.StateStore, caller *acl.ACL, ns, jobID string, tasks []taskRef) (string, error) {
	if caller == nil {
		return "", structs.PermissionDenied("no ACL")
	}
	if caller.IsManagement() || caller.IsDisabled() {
		return "", nil
	}
	policies, err := store.ACLPolicies(nil, "")
	if err != nil {
		return "", err
	}
	var base acl.Probe
	namespaces, err := store.Namespaces(nil)
	if err != nil {
		return "", err
	}
	for _, n := range namespaces {
		base.Namespaces = append(base.Namespaces, n.Name)
	}
	pools, err := store.NodePools(nil, "")
	if err != nil {
		return "", err
	}
	for _, p := range pools {
		base.NodePools = append(base.NodePools, p.Name)
	}
	for _, p := range policies {
		if !slices.ContainsFunc(tasks, func(t taskRef) bool { return jobACLMatches(p.JobACL, ns, jobID, t.group, t.task) }) {
			continue
		}
		parsed, err := acl.Parse(p.Rules)
		if err != nil {
			// It grants nothing when compiled either (compileACL skips it).
			continue
		}
		granted, err := s.compileACL(store, []string{p.Name}, nil)
		if err != nil {
			return "", err
		}
		probe := base
		probe.Namespaces = slices.Clone(base.Namespaces)
		probe.AddPolicy(parsed)
		if missing := acl.Beyond(caller, granted, probe); len(missing) > 0 {
			return describeGrants(missing, ns) + " through policy " + p.Name, nil
		}
	}
	paths := []string{"nomad/jobs", "nomad/jobs/" + jobID}
	for _, t := range tasks {
		paths = append(paths, "nomad/jobs/"+jobID+"/"+t.group, "nomad/jobs/"+jobID+"/"+t.group+"/"+t.task)
	}
	slices.Sort(paths)
	for _, p := range slices.Compact(paths) {
		if caller.AllowVariableOperation(ns, p, acl.VariablesCapabilityRead) {
			continue
		}
		v, err := store.VariableByPath(nil, ns, p)
		if err != nil {
			return "", err
		}
		if v != nil {
			return fmt.Sprintf("read of variable %q in namespace %q", p, ns), nil
		}
	}
	return "", nil
}

// describeGrants names at most a few grants; capabilities in the job's own namespace by name
// alone, the rest with where they hold.
func describeGrants(grants []acl.Grant, ns string) string {
	const most = 4
	var words []string
	for i, g := range grants {
		if i == most {
			words = append(words, fmt.Sprintf("%d more", len(grants)-most))
			break
		}
		if g.Block == "namespace" && g.Label == ns {
			words = append(words, g.Capability)
			continue
		}
		words = append(words, g.String())
	}
	return strings.Join(words, ", ")
}

// recordSubmitter sets who registered the version (Job.SubmittedBy) from the caller the
// server resolved, whatever the request carried. A scale changes a count, not the code, so
// the version keeps whoever registered its code.
func recordSubmitter(args *structs.JobRegisterRequest, actor *structs.Actor) {
	if args.Scaling != nil {
		return
	}
	args.Job.SubmittedBy = actor.Submitter()
}
