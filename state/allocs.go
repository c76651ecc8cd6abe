package state

import (
	"fmt"
	"reflect"
	"sort"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// jobSet collects the jobs a transaction touched, so their summaries and statuses are derived
// once at its end.
type jobSet map[structs.NamespacedID]bool

func (js jobSet) add(namespace, id string) {
	js[structs.NamespacedID{Namespace: namespace, ID: id}] = true
}

// ApplyPlanResultsTxn applies one scheduling decision: new allocations, in-place updates,
// stops, and the evaluations that record it. Placements and in-place updates are dropped when
// the job they were planned for is gone or stopped since the plan was computed: an
// allocation of a purged job would have no job to answer to.
func (s *StateStore) ApplyPlanResultsTxn(txn *Txn, req *structs.ApplyPlanResultsRequest) error {
	touched := jobSet{}
	changed := false
	deployments := map[string]bool{}
	placed := map[string]bool{}
	for _, u := range req.DeploymentUpdates {
		if err := s.updateDeploymentStatusTxn(txn, u, req.UpdatedAt); err != nil {
			return err
		}
	}
	if req.Job != nil && (len(req.AllocsPlaced) > 0 || len(req.AllocsUpdated) > 0 || req.Deployment != nil) {
		current, err := jobByIDTxn(txn.Txn, nil, req.Job.Namespace, req.Job.ID)
		if err != nil {
			return err
		}
		if current != nil && current.CreateIndex == req.Job.CreateIndex && !current.Stop {
			if req.Deployment != nil {
				if err := s.upsertDeploymentTxn(txn, req.Deployment); err != nil {
					return err
				}
				deployments[req.Deployment.ID] = true
			}
			for _, alloc := range req.AllocsPlaced {
				placed[alloc.ID] = true
				deployments[alloc.DeploymentID] = true
				alloc.Job = req.Job
				alloc.CreateIndex, alloc.ModifyIndex, alloc.AllocModifyIndex = txn.Index, txn.Index, txn.Index
				if err := txn.Insert(tableAllocs, alloc); err != nil {
					return fmt.Errorf("state: alloc insert: %w", err)
				}
				if err := s.linkReplacementTxn(txn, alloc, req.UpdatedAt); err != nil {
					return err
				}
				changed = true
			}
			for _, id := range req.AllocsUpdated {
				existing, err := allocByIDTxn(txn.Txn, nil, id)
				if err != nil {
					return err
				}
				if existing == nil {
					continue
				}
				updated := existing.Copy()
				updated.Job = req.Job
				// An allocation updated in place joins the plan's deployment and is watched
				// for health again, as a new one would be.
				if req.Deployment != nil && updated.DeploymentID != req.Deployment.ID {
					deployments[updated.DeploymentID] = true
					updated.DeploymentID, updated.DeploymentStatus = req.Deployment.ID, nil
				}
				updated.ModifyIndex, updated.AllocModifyIndex, updated.ModifyTime = txn.Index, txn.Index, req.UpdatedAt
				if err := txn.Insert(tableAllocs, updated); err != nil {
					return fmt.Errorf("state: alloc update: %w", err)
				}
				changed = true
			}
			touched.add(req.Job.Namespace, req.Job.ID)
		}
	}
	for _, stop := range req.AllocsStopped {
		existing, err := allocByIDTxn(txn.Txn, nil, stop.AllocID)
		if err != nil {
			return err
		}
		if existing == nil {
			continue
		}
		updated := existing.Copy()
		updated.DesiredStatus = structs.AllocDesiredStatusStop
		updated.DesiredDescription = stop.DesiredDescription
		updated.ModifyIndex, updated.AllocModifyIndex, updated.ModifyTime = txn.Index, txn.Index, req.UpdatedAt
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return fmt.Errorf("state: alloc stop: %w", err)
		}
		touched.add(updated.Namespace, updated.JobID)
		deployments[updated.DeploymentID] = true
		changed = true
	}
	evicted, err := s.preemptAllocsTxn(txn, req, placed, touched, deployments)
	if err != nil {
		return err
	}
	lost, err := s.loseAllocsTxn(txn, req, touched, deployments)
	if err != nil {
		return err
	}
	if changed || evicted || lost {
		if err := txn.bumpIndex(tableAllocs); err != nil {
			return err
		}
	}
	if err := s.recountDeploymentsTxn(txn, deployments); err != nil {
		return err
	}
	queued := map[structs.NamespacedID]map[string]int{}
	for _, eval := range req.Evals {
		// A superseded evaluation keeps the counts it had; they are not the job's any more.
		if eval.QueuedAllocations != nil && eval.Status != structs.EvalStatusCancelled {
			id := structs.NamespacedID{Namespace: eval.Namespace, ID: eval.JobID}
			queued[id] = eval.QueuedAllocations
			touched[id] = true
		}
	}
	if err := s.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	return s.reconcileJobsTxn(txn, touched, queued)
}

// linkReplacementTxn records on the allocation that placed replaces (its PreviousAllocation)
// that placed is its replacement, in the same write, as upstream's state does: `alloc status`
// shows it as the replacement (of a failure, a destructive update, a migration, a disconnect
// or a lost allocation). Neither the scheduler nor the GC decides by it (they read the
// replacements' reschedule trackers, see scheduler.MayReschedule). An unknown previous
// allocation (collected since the plan was computed) or one of another job is left alone.
//
// The latest replacement wins over one recorded earlier: an allocation is only replaced again
// when the earlier replacement is gone or stopped (a reconnected original that won against its
// replacement and was then disconnected again), and NextAllocation names the one that stands
// in for it now. Placements are applied in the entry's order, so every server records the same
// one.
//
// Only ModifyIndex and ModifyTime move: AllocModifyIndex is what a client compares to take a
// new version of an allocation it runs, and nothing it runs changed.
func (s *StateStore) linkReplacementTxn(txn *Txn, placed *structs.Allocation, updatedAt int64) error {
	if placed.PreviousAllocation == "" || placed.PreviousAllocation == placed.ID {
		return nil
	}
	prev, err := allocByIDTxn(txn.Txn, nil, placed.PreviousAllocation)
	if err != nil {
		return err
	}
	if prev == nil || prev.Namespace != placed.Namespace || prev.JobID != placed.JobID || prev.NextAllocation == placed.ID {
		return nil
	}
	// A stored row is shared with every reader of older snapshots: change a copy.
	updated := prev.Copy()
	updated.NextAllocation = placed.ID
	updated.ModifyIndex, updated.ModifyTime = txn.Index, updatedAt
	if err := txn.Insert(tableAllocs, updated); err != nil {
		return fmt.Errorf("state: alloc replacement link: %w", err)
	}
	return nil
}

// UpdateAllocsFromClientTxn applies what node's client reports: ClientStatus,
// ClientDescription, TaskStates, NetworkStatus (when sent) and the first health verdict (DeploymentStatus.Healthy) of
// each of its allocations, nothing else. An allocation whose job was removed lives on in the
// purge record, which takes the report instead; a report about an allocation of another node
// is ignored.
func (s *StateStore) UpdateAllocsFromClientTxn(txn *Txn, nodeID string, allocs []*structs.Allocation, updatedAt int64) error {
	touched := jobSet{}
	deployments := map[string]bool{}
	for _, alloc := range allocs {
		existing, err := allocByIDTxn(txn.Txn, nil, alloc.ID)
		if err != nil {
			return err
		}
		if existing == nil {
			if _, err := s.updatePurgedAllocTxn(txn, nodeID, alloc, updatedAt); err != nil {
				return err
			}
			continue
		}
		if existing.NodeID != nodeID {
			continue
		}
		updated := existing.Copy()
		updated.ClientStatus = alloc.ClientStatus
		updated.ClientDescription = alloc.ClientDescription
		updated.TaskStates = alloc.TaskStates
		// The client's verdict on the allocation's health in its deployment is taken once:
		// a report for another deployment (the allocation was updated in place since) or
		// after the verdict changes nothing.
		if ds := alloc.DeploymentStatus; ds != nil && ds.Healthy != nil && existing.DeploymentID != "" &&
			alloc.DeploymentID == existing.DeploymentID &&
			(existing.DeploymentStatus == nil || existing.DeploymentStatus.Healthy == nil) {
			health := &structs.AllocDeploymentStatus{Healthy: new(*ds.Healthy), Timestamp: ds.Timestamp, ModifyIndex: txn.Index}
			if existing.DeploymentStatus != nil {
				health.Canary = existing.DeploymentStatus.Canary
			}
			updated.DeploymentStatus = health
			deployments[updated.DeploymentID] = true
			if err := s.moveProgressDeadlineTxn(txn, updated); err != nil {
				return err
			}
		}
		if alloc.NetworkStatus != nil {
			updated.NetworkStatus = alloc.NetworkStatus
		}
		updated.ModifyIndex, updated.ModifyTime = txn.Index, updatedAt
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return fmt.Errorf("state: alloc client update: %w", err)
		}
		// A finished allocation serves nothing: its services go in the same write, whether
		// or not its client deregistered them first.
		if updated.ClientTerminalStatus() {
			if err := s.deleteAllocServiceRegistrationsTxn(txn, updated.ID); err != nil {
				return err
			}
		}
		touched.add(updated.Namespace, updated.JobID)
	}
	if len(touched) == 0 {
		return nil
	}
	if err := txn.bumpIndex(tableAllocs); err != nil {
		return err
	}
	if err := s.recountDeploymentsTxn(txn, deployments); err != nil {
		return err
	}
	return s.reconcileJobsTxn(txn, touched, nil)
}

// markNodeAllocsLostTxn marks every allocation of a down node that its client had not finished
// as lost, and returns the jobs they belong to. When the node is only disconnected, the
// allocations of groups with a disconnect block's lost_after (or max_client_disconnect)
// become unknown instead, recording when: the scheduler makes them lost once it passes.
func (s *StateStore) markNodeAllocsLostTxn(txn *Txn, nodeID string, updatedAt int64, disconnected bool) (jobSet, error) {
	allocs, err := allocsByNodeTxn(txn.Txn, nil, nodeID)
	if err != nil {
		return nil, err
	}
	touched := jobSet{}
	for _, alloc := range allocs {
		if alloc.ClientTerminalStatus() {
			continue
		}
		updated := alloc.Copy()
		if disconnected && alloc.DesiredStatus == structs.AllocDesiredStatusRun && alloc.Job != nil &&
			structs.DisconnectFor(alloc.Job.LookupTaskGroup(alloc.TaskGroup)).LostAfter > 0 {
			if alloc.ClientStatus == structs.AllocClientStatusUnknown {
				continue
			}
			updated.ClientStatus = structs.AllocClientStatusUnknown
			updated.ClientDescription = "alloc is unknown since its node is disconnected"
			updated.AllocStates = append(updated.AllocStates, &structs.AllocState{
				Field: structs.AllocStateFieldClientStatus, Value: structs.AllocClientStatusUnknown,
				Time: time.Unix(0, updatedAt).UTC(),
			})
			updated.ModifyIndex, updated.ModifyTime = txn.Index, updatedAt
			if err := txn.Insert(tableAllocs, updated); err != nil {
				return nil, fmt.Errorf("state: alloc unknown: %w", err)
			}
			touched.add(updated.Namespace, updated.JobID)
			continue
		}
		updated.ClientStatus = structs.AllocClientStatusLost
		updated.ClientDescription = "alloc is lost since its node is down"
		updated.ModifyIndex, updated.ModifyTime = txn.Index, updatedAt
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return nil, fmt.Errorf("state: alloc lost: %w", err)
		}
		if err := s.deleteAllocServiceRegistrationsTxn(txn, updated.ID); err != nil {
			return nil, err
		}
		touched.add(updated.Namespace, updated.JobID)
	}
	if len(touched) > 0 {
		if err := txn.bumpIndex(tableAllocs); err != nil {
			return nil, err
		}
	}
	return touched, nil
}

// deleteJobAllocsTxn removes every allocation of a job (a purge or GC of the job). Clients
// see them disappear and stop what they still run.
func (s *StateStore) deleteJobAllocsTxn(txn *Txn, namespace, id string) error {
	allocs, err := allocsByJobTxn(txn.Txn, nil, namespace, id)
	if err != nil {
		return err
	}
	for _, alloc := range allocs {
		if err := txn.Delete(tableAllocs, alloc); err != nil {
			return fmt.Errorf("state: alloc delete: %w", err)
		}
		if err := s.deleteAllocServiceRegistrationsTxn(txn, alloc.ID); err != nil {
			return err
		}
	}
	return txn.bumpIndexIf(len(allocs) > 0, tableAllocs)
}

// reconcileJobsTxn derives the summary and status of every touched job from its allocations
// and evaluations. queued, when it has an entry for a job, replaces its groups' Queued counts.
func (s *StateStore) reconcileJobsTxn(txn *Txn, touched jobSet, queued map[structs.NamespacedID]map[string]int) error {
	ids := make([]structs.NamespacedID, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	// Map order is random; the FSM must write in the same order on every server.
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		if err := s.reconcileJobSummaryTxn(txn, id.Namespace, id.ID, queued[id]); err != nil {
			return err
		}
		if err := s.setJobStatusTxn(txn, id.Namespace, id.ID); err != nil {
			return err
		}
	}
	return nil
}

// reconcileJobSummaryTxn recounts a job's allocations by group and client status, on top of
// its tally of allocations the GC collected (DeleteAllocsTxn). Queued is kept unless queued
// gives new values.
func (s *StateStore) reconcileJobSummaryTxn(txn *Txn, namespace, id string, queued map[string]int) error {
	raw, err := txn.First(tableJobSummary, indexID, namespace, id)
	if err != nil {
		return fmt.Errorf("state: job summary lookup: %w", err)
	}
	if raw == nil {
		return nil
	}
	prev := raw.(*structs.JobSummary)
	next := *prev
	next.Summary = make(map[string]structs.TaskGroupSummary, len(prev.Summary))
	for name, tgs := range prev.Summary {
		q := tgs.Queued
		if queued != nil {
			q = queued[name]
		}
		next.Summary[name] = structs.TaskGroupSummary{Queued: q}
	}
	// The allocations the GC collected still count: the summary keeps what ran.
	collected, err := jobCollectedAllocsTxn(txn, namespace, id)
	if err != nil {
		return err
	}
	if collected != nil {
		for name, c := range collected.Groups {
			if tgs, ok := next.Summary[name]; ok {
				tgs.Complete, tgs.Failed, tgs.Lost = c.Complete, c.Failed, c.Lost
				next.Summary[name] = tgs
			}
		}
	}
	allocs, err := allocsByJobTxn(txn.Txn, nil, namespace, id)
	if err != nil {
		return err
	}
	for _, alloc := range allocs {
		tgs, ok := next.Summary[alloc.TaskGroup]
		if !ok {
			continue
		}
		switch alloc.ClientStatus {
		case structs.AllocClientStatusPending:
			tgs.Starting++
		case structs.AllocClientStatusRunning:
			tgs.Running++
		case structs.AllocClientStatusComplete:
			tgs.Complete++
		case structs.AllocClientStatusFailed:
			tgs.Failed++
		case structs.AllocClientStatusLost:
			tgs.Lost++
		case structs.AllocClientStatusUnknown:
			tgs.Unknown++
		}
		next.Summary[alloc.TaskGroup] = tgs
	}
	if reflect.DeepEqual(prev.Summary, next.Summary) {
		return nil
	}
	next.ModifyIndex = txn.Index
	if err := txn.Insert(tableJobSummary, &next); err != nil {
		return fmt.Errorf("state: job summary insert: %w", err)
	}
	return txn.bumpIndex(tableJobSummary)
}

// AllocByID reads one allocation; nil when unknown.
func (s *StateStore) AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	return allocByIDTxn(s.db.Txn(false), ws, id)
}

func allocByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	return first[*structs.Allocation](txn, ws, "alloc lookup", tableAllocs, indexID, id)
}

// AllocsByJob lists every allocation of a job, newest first.
func (s *StateStore) AllocsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Allocation, error) {
	return allocsByJobTxn(s.db.Txn(false), ws, namespace, jobID)
}

func allocsByJobTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) ([]*structs.Allocation, error) {
	return allocsBy(txn, ws, "allocs of job", indexJob, namespace, jobID)
}

// AllocsByNode lists the allocations placed on a node, newest first.
func (s *StateStore) AllocsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	return allocsByNodeTxn(s.db.Txn(false), ws, nodeID)
}

func allocsByNodeTxn(txn *memdb.Txn, ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	return allocsBy(txn, ws, "allocs of node", indexNode, nodeID)
}

// AllocsByEval lists the allocations an evaluation placed, newest first.
func (s *StateStore) AllocsByEval(ws memdb.WatchSet, evalID string) ([]*structs.Allocation, error) {
	return allocsBy(s.db.Txn(false), ws, "allocs of eval", indexEval, evalID)
}

// Allocs lists allocations in namespace ("*" for all) whose ID starts with prefix, newest
// first.
func (s *StateStore) Allocs(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Allocation, error) {
	all, err := allocsBy(s.db.Txn(false), ws, "alloc list", indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return inNamespace(all, namespace, func(a *structs.Allocation) string { return a.Namespace }), nil
}

func allocsBy(txn *memdb.Txn, ws memdb.WatchSet, what, index string, args ...any) ([]*structs.Allocation, error) {
	out, err := list[*structs.Allocation](txn, ws, what, tableAllocs, index, args...)
	newestFirst(out, func(a *structs.Allocation) uint64 { return a.CreateIndex }, func(a *structs.Allocation) string { return a.ID })
	return out, err
}
