package nomad

import (
	"sort"
	"strings"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// jobPurgePlan answers what purging a job would do, before anyone does it: the versions,
// allocations, deployments, services and scaling policies the purge removes, and the
// evaluations, variables and children it leaves. It needs read-job, like reading the job;
// variable paths are shown only where the caller may list them. A missing job is a 404.
var jobPurgePlan = read("Job.PurgePlan", spec[structs.JobSpecificRequest, structs.JobPurgePlanResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobSpecificRequest],
	Authorize: jobReadRule[structs.JobSpecificRequest],
	Serve: func(c *rpcCall, req *structs.JobSpecificRequest, reply *structs.JobPurgePlanResponse) error {
		store := c.srv.State().PointInTime()
		plan, err := buildPurgePlan(c, store, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		reply.Plan = plan
		reply.Index = store.LatestIndex()
		c.srv.setQueryMeta(&reply.QueryMeta)
		return nil
	},
})

// PurgePlan says what purging a job would remove and what it would leave.
func (j *Job) PurgePlan(args *structs.JobSpecificRequest, reply *structs.JobPurgePlanResponse) error {
	return jobPurgePlan.Call(j.srv, args, reply)
}

func buildPurgePlan(c *rpcCall, store *state.StateStore, ns, jobID string) (*structs.JobPurgePlan, error) {
	job, err := store.JobByID(nil, ns, jobID)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, structs.NotFound(structs.ErrJobNotFound)
	}
	// Empty lists, not nulls: the answer reads the same whatever the job has.
	plan := &structs.JobPurgePlan{Namespace: ns, JobID: jobID,
		Removes: structs.JobPurgePlanRemoves{Versions: []structs.JobPurgePlanVersion{}, Allocations: map[string]int{},
			Deployments: []string{}, Services: []structs.JobPurgePlanService{}, ScalingPolicies: []string{}},
		Keeps: structs.JobPurgePlanKeeps{Variables: []string{}, Children: []string{}}}
	if p, err := store.JobProtected(ns, jobID); err != nil {
		return nil, err
	} else if p != nil {
		plan.Protected, plan.ProtectionReason = true, p.Reason
	}

	versions, err := store.JobVersionsByID(nil, ns, jobID)
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		pv := structs.JobPurgePlanVersion{Version: v.Version}
		if v.VersionTag != nil {
			pv.Tag = v.VersionTag.Name
		}
		plan.Removes.Versions = append(plan.Removes.Versions, pv)
	}
	allocs, err := store.AllocsByJob(nil, ns, jobID)
	if err != nil {
		return nil, err
	}
	for _, a := range allocs {
		plan.Removes.Allocations[a.ClientStatus]++
	}
	deployments, err := store.DeploymentsByJob(nil, ns, jobID)
	if err != nil {
		return nil, err
	}
	for _, d := range deployments {
		plan.Removes.Deployments = append(plan.Removes.Deployments, d.ID)
	}
	services, err := store.ServiceRegistrationsByJob(nil, ns, jobID)
	if err != nil {
		return nil, err
	}
	for _, s := range services {
		plan.Removes.Services = append(plan.Removes.Services, structs.JobPurgePlanService{ID: s.ID, ServiceName: s.ServiceName, AllocID: s.AllocID})
	}
	policies, err := store.ScalingPolicies(nil, ns, jobID)
	if err != nil {
		return nil, err
	}
	for _, p := range policies {
		plan.Removes.ScalingPolicies = append(plan.Removes.ScalingPolicies, p.ID)
	}

	evals, err := store.EvalsByJob(nil, ns, jobID)
	if err != nil {
		return nil, err
	}
	plan.Keeps.Evaluations = len(evals)
	for _, e := range evals {
		if e.Status == structs.EvalStatusPending || e.Status == structs.EvalStatusBlocked {
			plan.Keeps.CanceledEvaluations++
		}
	}
	root := "nomad/jobs/" + jobID
	vars, err := store.Variables(nil, ns, root)
	if err != nil {
		return nil, err
	}
	for _, v := range vars {
		// The prefix also matches other jobs' paths ("nomad/jobs/web2" for "web").
		if v.Path != root && !strings.HasPrefix(v.Path, root+"/") {
			continue
		}
		if c.acl.AllowVariableOperation(ns, v.Path, acl.VariablesCapabilityList) {
			plan.Keeps.Variables = append(plan.Keeps.Variables, v.Path)
		} else {
			plan.Keeps.HiddenVariables++
		}
	}
	children, err := store.Jobs(nil, ns, jobID+"/")
	if err != nil {
		return nil, err
	}
	for _, child := range children {
		if child.ParentID == jobID {
			plan.Keeps.Children = append(plan.Keeps.Children, child.ID)
		}
	}
	sort.Strings(plan.Keeps.Children)
	return plan, nil
}
