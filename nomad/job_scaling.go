package nomad

import (
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

func jobScaleWrite(req *structs.JobScaleRequest) *structs.WriteRequest { return &req.WriteRequest }

// jobScale changes one group's count. Scaling to 0 keeps the job registered.
var jobScale = write("Job.Scale", spec[structs.JobScaleRequest, structs.JobRegisterResponse]{
	Prepare:   jobWriteDefaultNamespace(jobScaleWrite),
	Authorize: jobRegistrationRule(jobScaleWrite, acl.NamespaceCapabilityScaleJob, acl.NamespaceCapabilitySubmitJob),
	Validate: func(req *structs.JobScaleRequest) error {
		if req.Target["Group"] == "" {
			return structs.BadRequest("missing task group name for scaling action")
		}
		if req.Count != nil && *req.Count < 0 {
			return structs.BadRequest("scaling action count can't be negative")
		}
		if (req.Count != nil && req.Error) || (req.Count == nil && req.Message == "" && !req.Error) {
			return structs.BadRequest("scaling action should not contain count if error is true, and must contain a message otherwise")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.JobScaleRequest, reply *structs.JobRegisterResponse) error {
		group := req.Target["Group"]
		current, err := c.srv.State().JobByID(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if current == nil {
			return structs.NotFound(structs.ErrJobNotFound)
		}
		if req.JobModifyIndex != 0 && req.JobModifyIndex != current.JobModifyIndex {
			return structs.Conflict("job modify index %d is not current (%d)", req.JobModifyIndex, current.JobModifyIndex)
		}
		if current.LookupTaskGroup(group) == nil {
			return structs.BadRequest("task group %q specified for scaling does not exist in job", group)
		}
		scaling := scalingEvent(req, current, group)
		if req.Count == nil {
			// A scaling event without a count records the event only; the job does not change.
			return c.srv.Endpoints.Job.recordScalingEvent(scaling, current, reply)
		}
		job := current.Copy()
		job.CopyTaskGroups()
		count := int(*req.Count)
		job.LookupTaskGroup(group).Count = &count
		register := &structs.JobRegisterRequest{Job: job, Scaling: scaling, WriteRequest: req.WriteRequest}
		if err := validateRegister(register); err != nil {
			return err
		}
		return c.srv.Endpoints.Job.applyRegister(register, c.actor, reply)
	},
})

// Scale changes one group's count.
func (j *Job) Scale(args *structs.JobScaleRequest, reply *structs.JobRegisterResponse) error {
	return jobScale.Call(j.srv, args, reply)
}

// jobScaleStatus reports each group's desired count and its scaling events.
var jobScaleStatus = read("Job.ScaleStatus", spec[structs.JobSpecificRequest, structs.JobScaleStatusResponse]{
	Prepare: jobQueryDefaultNamespace[structs.JobSpecificRequest],
	Authorize: func(c *rpcCall, req *structs.JobSpecificRequest) error {
		return jobAnyCapIn(c, req.Namespace, acl.NamespaceCapabilityReadJobScaling, acl.NamespaceCapabilityReadJob)
	},
	Serve: func(c *rpcCall, req *structs.JobSpecificRequest, reply *structs.JobScaleStatusResponse) error {
		store := c.srv.State()
		job, err := store.JobByID(nil, req.Namespace, req.JobID)
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
		events, err := store.ScalingEventsByJob(nil, job.Namespace, job.ID)
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
	},
})

// ScaleStatus reports each group's desired count.
func (j *Job) ScaleStatus(args *structs.JobSpecificRequest, reply *structs.JobScaleStatusResponse) error {
	return jobScaleStatus.Call(j.srv, args, reply)
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
	index, err := j.srv.raftApply(structs.ScalingEventRegisterRequestType, req)
	if err != nil {
		return err
	}
	reply.JobModifyIndex = job.JobModifyIndex
	reply.Index = index
	j.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}
