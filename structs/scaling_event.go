package structs

import "github.com/hashicorp/nomad/api"

// JobTrackedScalingEvents is how many scaling events are kept per task group, newest first.
const JobTrackedScalingEvents = 20

// JobScalingEvents holds the scaling events of one job's groups, newest first.
type JobScalingEvents struct {
	Namespace     string
	JobID         string
	ScalingEvents map[string][]*api.ScalingEvent
	ModifyIndex   uint64
}

// ScalingEventRequest records one scaling event of a task group. Alone in a Raft entry it is a
// scaling action that changes no count (a message or an error); inside a JobRegisterRequest it
// records the count change that entry makes, and gets that entry's evaluation ID. The leader
// fixes the event's Time before the apply.
type ScalingEventRequest struct {
	Namespace string
	JobID     string
	TaskGroup string
	Event     *api.ScalingEvent
	WriteRequest
}
