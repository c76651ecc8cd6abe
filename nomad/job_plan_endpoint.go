package nomad

import (
	"errors"
	"strings"

	"github.com/hashicorp/go-multierror"
	"github.com/hashicorp/go-uuid"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// jobPlan answers what registering Job would do: the scheduler runs against one point-in-time
// view of the state, on the same input an evaluation of the registration would get
// (schedulerInput), and nothing is written. plan-job (which submit-job implies) in the job's
// namespace is needed.
var jobPlan = write("Job.Plan", spec[structs.JobPlanRequest, structs.JobPlanResponse]{
	Prepare: func(req *structs.JobPlanRequest) error { return jobPrepareSubmitted(req.Job) },
	Authorize: func(c *rpcCall, req *structs.JobPlanRequest) error {
		return jobAnyCapIn(c, jobSubmittedNamespace(req.Job, req.Namespace), acl.NamespaceCapabilityPlanJob)
	},
	Validate: func(req *structs.JobPlanRequest) error {
		if req.Job == nil {
			return structs.BadRequest("Job must be specified")
		}
		if err := checkSubmittedJob(req.Job); err != nil {
			return err
		}
		if err := req.Job.Validate(); err != nil {
			return structs.BadRequest("%s", err.Error())
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.JobPlanRequest, reply *structs.JobPlanResponse) error {
		return c.srv.Endpoints.Job.plan(req, reply)
	},
})

// Plan answers what registering args.Job would do, writing nothing.
func (j *Job) Plan(args *structs.JobPlanRequest, reply *structs.JobPlanResponse) error {
	return jobPlan.Call(j.srv, args, reply)
}

// plan runs the scheduler on an authorized, valid plan request, on the leader.
func (j *Job) plan(args *structs.JobPlanRequest, reply *structs.JobPlanResponse) error {
	ns := args.Job.Namespace
	if err := args.Job.CheckMaxCount(j.srv.jobMaxCount()); err != nil {
		return err
	}
	store := j.srv.State().PointInTime()
	if namespace, err := store.NamespaceByName(nil, ns); err != nil {
		return err
	} else if namespace == nil {
		return structs.BadRequest("namespace %q does not exist", ns)
	} else if err := checkNamespaceCapabilities(namespace, args.Job); err != nil {
		return err
	}
	existing, err := store.JobByID(nil, ns, args.Job.ID)
	if err != nil {
		return err
	}
	if existing != nil && existing.Type != args.Job.Type {
		return structs.BadRequest("cannot update job from type %q to %q", existing.Type, args.Job.Type)
	}

	// The job as the registration would store it: an unchanged spec keeps its version (its
	// allocations are left alone), a changed one is the next version.
	job := args.Job.Copy()
	job.Version, job.JobModifyIndex = 0, store.LatestIndex()+1
	if existing != nil {
		reply.JobModifyIndex = existing.JobModifyIndex
		job.CreateIndex = existing.CreateIndex
		if !state.SpecChanged(existing, job) {
			job.Version, job.JobModifyIndex = existing.Version, existing.JobModifyIndex
		} else {
			job.Version = existing.Version + 1
		}
	}
	if args.Diff {
		if reply.Diff, err = existing.Diff(job, true); err != nil {
			return err
		}
	}
	reply.Warnings = strings.Join(job.Warnings(), "\n")
	reply.Annotations = &api.PlanAnnotations{DesiredTGUpdates: map[string]*api.DesiredUpdates{}}
	reply.Index = store.LatestIndex()
	if job.IsPeriodicActive() {
		// As upstream: the launch the schedule makes next if the job is registered now.
		if reply.NextPeriodicLaunch, err = job.NextPeriodicLaunch(now()); err != nil {
			return structs.BadRequest("%s", err.Error())
		}
	}
	// A periodic or parameterized job is not placed itself, its children are; upstream's
	// plan still runs the scheduler on it and so reports the placements each child will
	// ask for (and `job plan` exits 1), which deploy pipelines rely on. The blocked
	// evaluation below is left out for them: their registration makes none.
	placesItself := !job.IsPeriodic() && !job.IsParameterized()
	// No placement bound (the plan shows every placement the job asks for) and no time (an
	// unknown allocation is judged as still within its disconnect window). A deployment ID
	// that is never stored lets the scheduler plan as under the deployment the registration
	// would start: canaries, and at most max_parallel replacements, the rest left running
	// (upstream's plan shows "1 canary, 5 ignore", not six replacements).
	in, err := j.srv.schedulerInput(store, job, ns, job.ID)
	if err != nil {
		return err
	}
	if in.DeploymentID, err = uuid.GenerateUUID(); err != nil {
		return err
	}
	plan, err := computePlan(in)
	if err != nil {
		return err
	}
	reply.Annotations.DesiredTGUpdates = desiredUpdates(job, in.Allocs, plan)
	// Placements that fit nowhere are still placements the job asks for; FailedTGAllocs
	// says why they would wait.
	for group, n := range plan.Queued {
		if u := reply.Annotations.DesiredTGUpdates[group]; u != nil && n > 0 {
			u.Place += uint64(n)
		}
	}
	for _, v := range plan.Preempted() {
		reply.Annotations.PreemptedAllocs = append(reply.Annotations.PreemptedAllocs, preemptedStub(v))
	}
	if reply.Diff != nil {
		for _, tg := range reply.Diff.TaskGroups {
			tg.Updates = updateCounts(reply.Annotations.DesiredTGUpdates[tg.Name])
		}
	}
	if len(plan.Failed) > 0 {
		reply.FailedTGAllocs = plan.Failed
	}
	queued := 0
	for _, q := range plan.Queued {
		queued += q
	}
	if queued > 0 && placesItself {
		// The registration's evaluation would leave a blocked one to place the rest.
		blocked, err := worker.NewEval(job, structs.EvalTriggerQueuedAllocs, 0, now().UnixNano())
		if err != nil {
			return err
		}
		blocked.Status = structs.EvalStatusBlocked
		blocked.StatusDescription = "created to place remaining allocations"
		blocked.JobModifyIndex = job.JobModifyIndex
		reply.CreatedEvals = []*structs.Evaluation{blocked}
	}
	return nil
}

// preemptedStub is what job plan shows of an allocation the plan would preempt.
func preemptedStub(a *structs.Allocation) *api.AllocationListStub {
	s := a.Stub()
	return &api.AllocationListStub{
		ID: s.ID, EvalID: s.EvalID, Name: s.Name, Namespace: s.Namespace, NodeID: s.NodeID,
		NodeName: s.NodeName, JobID: s.JobID, JobType: s.JobType, JobVersion: s.JobVersion,
		TaskGroup: s.TaskGroup, DesiredStatus: s.DesiredStatus, DesiredDescription: s.DesiredDescription,
		ClientStatus: s.ClientStatus, ClientDescription: s.ClientDescription,
		CreateIndex: s.CreateIndex, ModifyIndex: s.ModifyIndex, CreateTime: s.CreateTime, ModifyTime: s.ModifyTime,
	}
}

// desiredUpdates counts, per group of job, what plan does to its allocations: a stop of an
// allocation replaced by a new version together with its placement is one destructive update.
func desiredUpdates(job *structs.Job, allocs []*structs.Allocation, plan *scheduler.Plan) map[string]*api.DesiredUpdates {
	out := map[string]*api.DesiredUpdates{}
	for _, tg := range job.TaskGroups {
		if tg != nil && tg.Name != nil {
			out[*tg.Name] = &api.DesiredUpdates{}
		}
	}
	group := func(name string) *api.DesiredUpdates {
		if out[name] == nil {
			out[name] = &api.DesiredUpdates{}
		}
		return out[name]
	}
	touched := map[string]bool{}
	replaced := map[string]int{}
	for _, s := range plan.Stop {
		touched[s.Alloc.ID] = true
		u := group(s.Alloc.TaskGroup)
		switch s.Reason {
		case scheduler.ReasonReplaced:
			u.DestructiveUpdate++
			replaced[s.Alloc.TaskGroup]++
		case scheduler.ReasonMigrating:
			u.Migrate++
			replaced[s.Alloc.TaskGroup]++
		default:
			u.Stop++
		}
	}
	for _, a := range plan.Update {
		touched[a.ID] = true
		group(a.TaskGroup).InPlaceUpdate++
	}
	for _, a := range plan.Place {
		if a.DeploymentStatus != nil && a.DeploymentStatus.Canary {
			u := group(a.TaskGroup)
			u.Canary++
			if replaced[a.TaskGroup] > 0 {
				// A system job's canary takes the place of the allocation on its node: that
				// stop is part of the canary, not an update of its own.
				replaced[a.TaskGroup]--
				u.DestructiveUpdate--
			}
			continue
		}
		if replaced[a.TaskGroup] > 0 {
			replaced[a.TaskGroup]--
			continue
		}
		group(a.TaskGroup).Place++
	}
	for _, a := range allocs {
		if touched[a.ID] || a.DesiredStatus != structs.AllocDesiredStatusRun || a.ClientTerminalStatus() {
			continue
		}
		if out[a.TaskGroup] != nil {
			out[a.TaskGroup].Ignore++
		}
	}
	return out
}

// updateCounts is a group's DesiredUpdates as the Updates of its diff, nonzero counts only.
func updateCounts(u *api.DesiredUpdates) map[string]uint64 {
	if u == nil {
		return nil
	}
	out := map[string]uint64{}
	for key, n := range map[string]uint64{
		structs.UpdateTypeIgnore: u.Ignore, structs.UpdateTypeCreate: u.Place, structs.UpdateTypeDestroy: u.Stop,
		structs.UpdateTypeMigrate: u.Migrate, structs.UpdateTypeInplaceUpdate: u.InPlaceUpdate,
		structs.UpdateTypeDestructiveUpdate: u.DestructiveUpdate, structs.UpdateTypeCanary: u.Canary,
	} {
		if n > 0 {
			out[key] = n
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// jobValidate reports whether Job would be accepted by a registration: every problem found,
// not an error. read-job in the job's namespace is needed, as upstream.
var jobValidate = write("Job.Validate", spec[structs.JobValidateRequest, structs.JobValidateResponse]{
	Prepare: func(req *structs.JobValidateRequest) error { return jobPrepareSubmitted(req.Job) },
	Authorize: func(c *rpcCall, req *structs.JobValidateRequest) error {
		return jobAnyCapIn(c, jobSubmittedNamespace(req.Job, req.Namespace), acl.NamespaceCapabilityReadJob)
	},
	Serve: func(c *rpcCall, req *structs.JobValidateRequest, reply *structs.JobValidateResponse) error {
		return c.srv.Endpoints.Job.validate(req, reply)
	},
})

// Validate reports whether args.Job would be accepted by a registration.
func (j *Job) Validate(args *structs.JobValidateRequest, reply *structs.JobValidateResponse) error {
	return jobValidate.Call(j.srv, args, reply)
}

// validate lists what is wrong with an authorized validate request's job.
func (j *Job) validate(args *structs.JobValidateRequest, reply *structs.JobValidateResponse) error {
	ns := args.Job.Namespace
	reply.DriverConfigValidated = false
	reply.ValidationErrors = []string{}
	reply.Warnings = strings.Join(args.Job.Warnings(), "\n")
	var errs error = args.Job.Validate()
	if err := args.Job.CheckMaxCount(j.srv.jobMaxCount()); err != nil {
		errs = multierror.Append(errs, err)
	}
	if namespace, err := j.srv.State().NamespaceByName(nil, ns); err != nil {
		return err
	} else if err := checkNamespaceCapabilities(namespace, args.Job); err != nil {
		errs = multierror.Append(errs, err)
	}
	if errs == nil {
		return nil
	}
	var multi *multierror.Error
	if errors.As(errs, &multi) {
		for _, e := range multi.Errors {
			if e != nil {
				reply.ValidationErrors = append(reply.ValidationErrors, e.Error())
			}
		}
	} else {
		reply.ValidationErrors = append(reply.ValidationErrors, errs.Error())
	}
	reply.Error = errs.Error()
	return nil
}
