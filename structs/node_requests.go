package structs

import (
	"time"

	"github.com/hashicorp/nomad/api"
)

// EvalTriggerNodeDrain is the trigger of evaluations the drainer creates for the jobs whose
// allocations it marks for migration.
const EvalTriggerNodeDrain = "node-drain"

// NodeUpdateDrainRequest sets a node's drain strategy, or clears it when DrainStrategy is nil.
// The leader fixes DrainStrategy.StartedAt and ForceDeadline, UpdatedAt, the Actor and the
// evaluations before the apply, so every server writes the same node.
type NodeUpdateDrainRequest struct {
	NodeID        string
	DrainStrategy *api.DrainStrategy
	// MarkEligible makes the node eligible again when the drain is cleared.
	MarkEligible bool
	// Meta is the operator's note about the drain, kept in the node's LastDrain.
	Meta map[string]string
	// UpdatedAt is unix nanoseconds.
	UpdatedAt int64
	Actor     *Actor
	Evals     []*Evaluation
	WriteRequest
}

// BatchNodeUpdateDrainRequest is the drainer's: it ends the drains that are complete. Each
// entry names the strategy the drainer saw; a node whose strategy changed since (an operator
// updated or cancelled the drain) is left alone.
type BatchNodeUpdateDrainRequest struct {
	Complete  map[string]*api.DrainStrategy
	UpdatedAt int64
	WriteRequest
}

// NodeUpdateEligibilityRequest sets a node's scheduling eligibility.
type NodeUpdateEligibilityRequest struct {
	NodeID      string
	Eligibility string
	UpdatedAt   int64
	Evals       []*Evaluation
	WriteRequest
}

// NodeDeregisterRequest removes nodes (a purge, or the GC of down nodes). Allocations the
// nodes' clients had not finished become lost in the same transaction, and Evals (one per job
// they belong to) replace them.
type NodeDeregisterRequest struct {
	NodeIDs   []string
	UpdatedAt int64
	Evals     []*Evaluation
	WriteRequest
}

// NodeEvaluateRequest asks for evaluations of every job with allocations on the node.
type NodeEvaluateRequest struct {
	NodeID string
	WriteRequest
}

// NodeDrainUpdateResponse answers drain and eligibility updates, the shape of upstream's
// NodeDrainUpdateResponse and NodeEligibilityUpdateResponse.
type NodeDrainUpdateResponse struct {
	NodeModifyIndex uint64
	EvalIDs         []string
	EvalCreateIndex uint64
	WriteMeta
}

// AllocUpdateDesiredTransitionRequest sets the desired transition of allocations (the drainer
// marks those it migrates) and creates the evaluations that act on it, in one entry.
type AllocUpdateDesiredTransitionRequest struct {
	Allocs    map[string]*api.DesiredTransition
	Evals     []*Evaluation
	UpdatedAt int64
	WriteRequest
}

// Node event subsystems and messages, as upstream's.
const (
	NodeEventSubsystemCluster = "Cluster"
	NodeEventSubsystemDrain   = "Drain"

	NodeEventRegistered    = "Node registered"
	NodeEventDrainSet      = "Node drain strategy set"
	NodeEventDrainDisabled = "Node drain disabled"
	NodeEventDrainComplete = "Node drain complete"
	NodeEventEligible      = "Node marked as eligible for scheduling"
	NodeEventIneligible    = "Node marked as ineligible for scheduling"
)

// MaxNodeEvents is how many events a node keeps, the newest.
const MaxNodeEvents = 10

// AddNodeEvent appends ev to the node's events, keeping the newest MaxNodeEvents. The node
// must be a copy the caller may change.
func (n *Node) AddNodeEvent(ev *api.NodeEvent) {
	n.Events = append(n.Events, ev)
	if extra := len(n.Events) - MaxNodeEvents; extra > 0 {
		n.Events = append([]*api.NodeEvent(nil), n.Events[extra:]...)
	}
}

// NewDrainStrategy builds the strategy of a drain spec that starts at now: a negative
// deadline forces the drain at once, zero sets no deadline.
func NewDrainStrategy(spec api.DrainSpec, now time.Time) *api.DrainStrategy {
	ds := &api.DrainStrategy{DrainSpec: spec, StartedAt: now.UTC()}
	switch {
	case spec.Deadline < 0:
		ds.ForceDeadline = ds.StartedAt
	case spec.Deadline > 0:
		ds.ForceDeadline = ds.StartedAt.Add(spec.Deadline)
	}
	return ds
}

// DrainDeadline reports the time at which whatever is left on a draining node is stopped,
// and whether there is one.
func DrainDeadline(ds *api.DrainStrategy) (time.Time, bool) {
	if ds == nil || ds.Deadline == 0 {
		return time.Time{}, false
	}
	return ds.ForceDeadline, true
}
