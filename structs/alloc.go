package structs

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Desired statuses: what the servers want of an allocation.
const (
	AllocDesiredStatusRun   = "run"
	AllocDesiredStatusStop  = "stop"
	AllocDesiredStatusEvict = "evict"
)

// Client statuses: what the client running an allocation reports.
const (
	AllocClientStatusPending  = "pending"
	AllocClientStatusRunning  = "running"
	AllocClientStatusComplete = "complete"
	AllocClientStatusFailed   = "failed"
	AllocClientStatusLost     = "lost"
	AllocClientStatusUnknown  = "unknown"
)

// Task states.
const (
	TaskStatePending = "pending"
	TaskStateRunning = "running"
	TaskStateDead    = "dead"
)

// Task event types. The values are the wire strings clients display and match on.
const (
	TaskEventReceived      = "Received"
	TaskEventSetup         = "Task Setup"
	TaskEventSetupFailure  = "Setup Failure"
	TaskEventDriverFailure = "Driver Failure"
	// TaskEventDriverMessage is a driver's progress on starting a task (pulling its image).
	TaskEventDriverMessage = "Driver"
	TaskEventStarted       = "Started"
	TaskEventTerminated    = "Terminated"
	TaskEventKilling       = "Killing"
	TaskEventKilled        = "Killed"
	TaskEventRestarting    = "Restarting"
	TaskEventNotRestarting = "Not Restarting"
	TaskEventSignaling     = "Signaling"
	TaskEventRestartSignal = "Restart Signaled"
	// TaskEventWaitingShutdownDelay is upstream's event while a stopping task waits out its
	// shutdown_delay.
	TaskEventWaitingShutdownDelay = "Waiting for shutdown delay"
	// TaskEventHookMessage and TaskEventHookFailed report a template's change script.
	TaskEventHookMessage = "Task hook message"
	TaskEventHookFailed  = "Task hook failed"
)

// Allocation is one placement of a task group of a job on a node. The servers own the desired
// fields (DesiredStatus, Job, NodeID …); the client running it owns ClientStatus,
// ClientDescription and TaskStates. Writes from either side touch only their own fields, so a
// plan computed from a slightly old snapshot never rolls back what a client reported.
type Allocation struct {
	ID        string
	Namespace string
	EvalID    string
	// Name is "<job>.<group>[<index>]"; the index is what count changes add and remove.
	Name      string
	NodeID    string
	NodeName  string
	JobID     string
	Job       *Job
	TaskGroup string

	Resources          *api.Resources
	TaskResources      map[string]*api.Resources
	AllocatedResources *api.AllocatedResources
	Services           map[string]string
	Metrics            *api.AllocationMetric

	DesiredStatus      string
	DesiredDescription string
	DesiredTransition  api.DesiredTransition
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState

	DeploymentID          string
	DeploymentStatus      *api.AllocDeploymentStatus
	FollowupEvalID        string
	PreviousAllocation    string
	NextAllocation        string
	RescheduleTracker     *api.RescheduleTracker
	NetworkStatus         *api.AllocNetworkStatus
	PreemptedAllocations  []string
	PreemptedByAllocation string
	// AllocStates records the servers' changes of ClientStatus that the client did not
	// report: when the allocation's node disconnected (unknown) and when it came back. The
	// scheduler reads the time of the last "unknown" to know when lost_after passes.
	AllocStates []*AllocState `json:",omitempty"`

	CreateIndex      uint64
	ModifyIndex      uint64
	AllocModifyIndex uint64
	// CreateTime and ModifyTime are unix nanoseconds fixed by the leader before the apply.
	CreateTime int64
	ModifyTime int64
}

// TaskState is what the client knows about one task of an allocation.
type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent
}

// TaskEvent is one thing that happened to a task. The field set is the upstream wire shape;
// only some fields are filled for a given Type.
type TaskEvent struct {
	Type           string
	Time           int64
	DisplayMessage string
	Details        map[string]string
	Message        string

	FailsTask        bool
	RestartReason    string
	SetupError       string
	DriverError      string
	DriverMessage    string
	ExitCode         int
	Signal           int
	KillReason       string
	KillTimeout      time.Duration
	KillError        string
	StartDelay       int64
	DownloadError    string
	ValidationError  string
	DiskLimit        int64
	DiskSize         int64
	FailedSibling    string
	VaultError       string
	TaskSignalReason string
	TaskSignal       string
	GenericSource    string
}

// Copy returns a copy whose events slice may be appended to without touching the original.
func (ts *TaskState) Copy() *TaskState {
	return copyWith(ts, func(c *TaskState) {
		c.Events = append([]*TaskEvent(nil), ts.Events...)
	})
}

// Successful reports whether the task finished without failing.
func (ts *TaskState) Successful() bool {
	return ts.State == TaskStateDead && !ts.Failed
}

// AllocName builds an allocation's name from its job, group and index.
func AllocName(jobID, group string, index int) string {
	return fmt.Sprintf("%s.%s[%d]", jobID, group, index)
}

// Index returns the number in the brackets at the end of the allocation's name, or -1.
func (a *Allocation) Index() int {
	open := strings.LastIndexByte(a.Name, '[')
	if open < 0 || !strings.HasSuffix(a.Name, "]") {
		return -1
	}
	n, err := strconv.Atoi(a.Name[open+1 : len(a.Name)-1])
	if err != nil {
		return -1
	}
	return n
}

// ClientTerminalStatus reports whether the client has finished with the allocation: nothing of
// it runs any more.
func (a *Allocation) ClientTerminalStatus() bool {
	switch a.ClientStatus {
	case AllocClientStatusComplete, AllocClientStatusFailed, AllocClientStatusLost:
		return true
	}
	return false
}

// TerminalStatus reports whether the allocation is finished from the scheduler's point of
// view: the servers want it stopped, or the client has finished with it.
func (a *Allocation) TerminalStatus() bool {
	switch a.DesiredStatus {
	case AllocDesiredStatusStop, AllocDesiredStatusEvict:
		return true
	}
	return a.ClientTerminalStatus()
}

// JobVersion is the version of the job the allocation runs.
func (a *Allocation) JobVersion() uint64 {
	if a.Job == nil {
		return 0
	}
	return a.Job.Version
}

// Copy returns a copy whose task states may be changed without touching the original. The job
// is shared: stored jobs are never changed in place.
func (a *Allocation) Copy() *Allocation {
	return copyWith(a, func(c *Allocation) {
		if a.TaskStates != nil {
			c.TaskStates = make(map[string]*TaskState, len(a.TaskStates))
			for name, ts := range a.TaskStates {
				c.TaskStates[name] = ts.Copy()
			}
		}
		c.Services = maps.Clone(a.Services)
		c.PreemptedAllocations = append([]string(nil), a.PreemptedAllocations...)
		c.AllocStates = append([]*AllocState(nil), a.AllocStates...)
	})
}

// AllocState is one server-side change of an allocation's ClientStatus. Time is fixed by the
// leader before the Raft apply.
type AllocState struct {
	Field string
	Value string
	Time  time.Time
}

// AllocStateFieldClientStatus is the only Field recorded today.
const AllocStateFieldClientStatus = "ClientStatus"

// UnknownSince is when the allocation last became unknown (its node disconnected), zero when
// it never did or is not unknown now.
func (a *Allocation) UnknownSince() time.Time {
	if a.ClientStatus != AllocClientStatusUnknown {
		return time.Time{}
	}
	return a.lastState(AllocClientStatusUnknown)
}

// Reconnected reports whether the allocation was unknown once and its client has reported
// since: it came back from a disconnect.
func (a *Allocation) Reconnected() bool {
	return a.ClientStatus != AllocClientStatusUnknown && !a.lastState(AllocClientStatusUnknown).IsZero()
}

func (a *Allocation) lastState(value string) time.Time {
	for i := len(a.AllocStates) - 1; i >= 0; i-- {
		s := a.AllocStates[i]
		if s != nil && s.Field == AllocStateFieldClientStatus && s.Value == value {
			return s.Time
		}
	}
	return time.Time{}
}

// AllocListStub is the list form of an allocation, the shape of upstream's
// AllocationListStub.
type AllocListStub struct {
	ID                    string
	EvalID                string
	Name                  string
	Namespace             string
	NodeID                string
	NodeName              string
	JobID                 string
	JobType               string
	JobVersion            uint64
	TaskGroup             string
	AllocatedResources    *api.AllocatedResources `json:",omitempty"`
	DesiredStatus         string
	DesiredDescription    string
	ClientStatus          string
	ClientDescription     string
	TaskStates            map[string]*TaskState
	DeploymentStatus      *api.AllocDeploymentStatus
	FollowupEvalID        string
	NextAllocation        string
	RescheduleTracker     *api.RescheduleTracker
	PreemptedAllocations  []string
	PreemptedByAllocation string
	CreateIndex           uint64
	ModifyIndex           uint64
	CreateTime            int64
	ModifyTime            int64
}

// Stub builds the list form.
func (a *Allocation) Stub() *AllocListStub {
	s := &AllocListStub{
		ID:                    a.ID,
		EvalID:                a.EvalID,
		Name:                  a.Name,
		Namespace:             a.Namespace,
		NodeID:                a.NodeID,
		NodeName:              a.NodeName,
		JobID:                 a.JobID,
		JobVersion:            a.JobVersion(),
		TaskGroup:             a.TaskGroup,
		AllocatedResources:    a.AllocatedResources,
		DesiredStatus:         a.DesiredStatus,
		DesiredDescription:    a.DesiredDescription,
		ClientStatus:          a.ClientStatus,
		ClientDescription:     a.ClientDescription,
		TaskStates:            a.TaskStates,
		DeploymentStatus:      a.DeploymentStatus,
		FollowupEvalID:        a.FollowupEvalID,
		NextAllocation:        a.NextAllocation,
		RescheduleTracker:     a.RescheduleTracker,
		PreemptedAllocations:  a.PreemptedAllocations,
		PreemptedByAllocation: a.PreemptedByAllocation,
		CreateIndex:           a.CreateIndex,
		ModifyIndex:           a.ModifyIndex,
		CreateTime:            a.CreateTime,
		ModifyTime:            a.ModifyTime,
	}
	if a.Job != nil {
		s.JobType = a.Job.Type
	}
	return s
}

// AllocationEvent is the payload of events on TopicAllocation. Its allocation carries no Job:
// the job is on TopicJob, and repeating it in every allocation event would multiply its size.
type AllocationEvent struct {
	Allocation *Allocation
}
