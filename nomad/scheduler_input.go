package nomad

import (
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// schedulerInput reads what the scheduler decides job from, all from store (one point-in-time
// view): the job's allocations and latest deployment, every node and what runs on each, and the
// scheduler configuration in force for the job's node pool. The worker and Job.Plan both build
// their input here, so that a plan places as the evaluation of the registration will; each
// adds only what belongs to its run (the placement bound, a new deployment's ID and time, the
// evaluation's priority). job is nil for a purged job, which has only allocations to stop.
func (s *Server) schedulerInput(store *state.StateStore, job *structs.Job, namespace, jobID string) (scheduler.Input, error) {
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
	latest, err := store.LatestDeploymentByJob(nil, namespace, jobID)
	if err != nil {
		return scheduler.Input{}, err
	}
	// A purged job has no pool to take an algorithm from: the cluster's is used.
	pool := ""
	if job != nil {
		pool = job.NodePool
	}
	return scheduler.Input{Job: job, Allocs: allocs, Nodes: nodes, NodeAllocs: onNodes, Deployment: latest,
		Algorithm: s.schedulerAlgorithm(store, pool), Preemption: s.schedulerConfigIn(store).PreemptionConfig}, nil
}
