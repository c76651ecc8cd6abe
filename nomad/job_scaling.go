package nomad

import (
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

// Scale changes one group's count. Scaling to 0 keeps the job registered.
func (j *Job) Scale(args *structs.JobScaleRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Scale", args, reply); done {
		return err
	}
	aclObj, actor, err := j.authorizeJobWrite(&args.WriteRequest, acl.NamespaceCapabilityScaleJob, acl.NamespaceCapabilitySubmitJob)
	if err != nil {
		return err
	}
	if err := j.srv.registrationRejected(aclObj); err != nil {
		return err
	}
	group := args.Target["Group"]
	if group == "" {
		return structs.BadRequest("missing task group name for scaling action")
	}
	if args.Count != nil && *args.Count < 0 {
		return structs.BadRequest("scaling action count can't be negative")
	}
	if (args.Count != nil && args.Error) || (args.Count == nil && args.Message == "" && !args.Error) {
		return structs.BadRequest("scaling action should not contain count if error is true, and must contain a message otherwise")
	}
	store := j.srv.State()
	current, err := store.JobByID(nil, args.Namespace, args.JobID)
	if err != nil {
		return err
	}
	if current == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	if args.JobModifyIndex != 0 && args.JobModifyIndex != current.JobModifyIndex {
		return structs.Conflict("job modify index %d is not current (%d)", args.JobModifyIndex, current.JobModifyIndex)
	}
	if current.LookupTaskGroup(group) == nil {
		return structs.BadRequest("task group %q specified for scaling does not exist in job", group)
	}
	scaling := scalingEvent(args, current, group)
	if args.Count == nil {
		// A scaling event without a count records the event only; the job does not change.
		return j.recordScalingEvent(scaling, current, reply)
	}
	job := current.Copy()
	job.CopyTaskGroups()
	count := int(*args.Count)
	job.LookupTaskGroup(group).Count = &count
	return j.register(&structs.JobRegisterRequest{Job: job, Scaling: scaling, WriteRequest: args.WriteRequest}, actor, reply)
}

// ScaleStatus reports each group's desired count.
func (j *Job) ScaleStatus(args *structs.JobSpecificRequest, reply *structs.JobScaleStatusResponse) error {
	if done, err := j.srv.forwardRead("Job.ScaleStatus", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := j.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if args.Namespace == "" {
		args.Namespace = structs.DefaultNamespace
	}
	if !aclObj.AllowNamespaceOperation(args.Namespace, acl.NamespaceCapabilityReadJobScaling) &&
		!aclObj.AllowNamespaceOperation(args.Namespace, acl.NamespaceCapabilityReadJob) {
		return structs.PermissionDenied("read-job-scaling or read-job capability required in namespace %q", args.Namespace)
	}
	job, err := j.srv.State().JobByID(nil, args.Namespace, args.JobID)
	if err != nil {
		return err
	}
	if job == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	reply.JobID = job.ID
	reply.Namespace = job.Namespace
	reply.JobCreateIndex = job.CreateIndex
	reply.JobModifyIndex = job.JobModifyIndex
	reply.JobStopped = job.Stop
	events, err := j.srv.State().ScalingEventsByJob(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	reply.TaskGroups = map[string]structs.TaskGroupScaleStatus{}
	for _, tg := range job.TaskGroups {
		st := structs.TaskGroupScaleStatus{Events: []*api.ScalingEvent{}}
		if tg.Count != nil {
			st.Desired = *tg.Count
		}
		if events != nil && events.ScalingEvents[*tg.Name] != nil {
			st.Events = events.ScalingEvents[*tg.Name]
		}
		reply.TaskGroups[*tg.Name] = st
	}
	return nil
}

// scalingEvent is the event a scaling action records for group of job, its time fixed here
// (the leader's clock, never the FSM's).
func scalingEvent(args *structs.JobScaleRequest, job *structs.Job, group string) *structs.ScalingEventRequest {
	var previous int64
	if tg := job.LookupTaskGroup(group); tg != nil && tg.Count != nil {
		previous = int64(*tg.Count)
	}
	event := &api.ScalingEvent{
		PreviousCount: previous, Error: args.Error, Message: args.Message, Meta: args.Meta,
		Time: uint64(now().UnixNano()),
	}
	if args.Count != nil {
		count := *args.Count
		event.Count = &count
	}
	return &structs.ScalingEventRequest{Namespace: job.Namespace, JobID: job.ID, TaskGroup: group, Event: event,
		WriteRequest: args.WriteRequest}
}

// recordScalingEvent stores a scaling event that changes no count: the job keeps its modify
// index and no evaluation is made.
func (j *Job) recordScalingEvent(req *structs.ScalingEventRequest, job *structs.Job, reply *structs.JobRegisterResponse) error {
	if err := j.srv.checkLeader(); err != nil {
		return err
	}
	index, err := j.srv.raftApply(structs.ScalingEventRegisterRequestType, req)
	if err != nil {
		return err
	}
	reply.JobModifyIndex = job.JobModifyIndex
	reply.Index = index
	j.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}
