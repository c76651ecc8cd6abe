package nomad

import (
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// schedulerInput reads what the scheduler decides job from, all from store (one point-in-time
// view): the job's allocations, every node and what runs on each. maxPlace bounds the
// placements of one plan (0: no bound).
func (s *Server) schedulerInput(store *state.StateStore, job *structs.Job, namespace, jobID string, maxPlace int) (scheduler.Input, error) {
	allocs, err := store.AllocsByJob(nil, namespace, jobID)
	if err != nil {
		return scheduler.Input{}, err
	}
	nodes, err := store.Nodes(nil, "")
	if err != nil {
		return scheduler.Input{}, err
	}
	// What runs on each node uses its resources, whatever job it belongs to.
	onNodes := map[string][]*structs.Allocation{}
	for _, n := range nodes {
		onNode, err := store.AllocsByNode(nil, n.ID)
		if err != nil {
			return scheduler.Input{}, err
		}
		for _, a := range onNode {
			if !a.TerminalStatus() {
				onNodes[n.ID] = append(onNodes[n.ID], a)
			}
		}
	}
	return scheduler.Input{Job: job, Allocs: allocs, Nodes: nodes, NodeAllocs: onNodes,
		MaxPlacements: maxPlace, Algorithm: s.config.SchedulerAlgorithm,
		Preemption: s.schedulerConfigIn(store).PreemptionConfig}, nil
}
