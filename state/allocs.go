package state

import (
	"fmt"
	"reflect"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
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
	if req.Job != nil && (len(req.AllocsPlaced) > 0 || len(req.AllocsUpdated) > 0) {
		current, err := jobByIDTxn(txn.Txn, nil, req.Job.Namespace, req.Job.ID)
		if err != nil {
			return err
		}
		if current != nil && current.CreateIndex == req.Job.CreateIndex && !current.Stop {
			for _, alloc := range req.AllocsPlaced {
				alloc.Job = req.Job
				alloc.CreateIndex, alloc.ModifyIndex, alloc.AllocModifyIndex = txn.Index, txn.Index, txn.Index
				if err := txn.Insert(tableAllocs, alloc); err != nil {
					return fmt.Errorf("state: alloc insert: %w", err)
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
		changed = true
	}
	if changed {
		if err := txn.bumpIndex(tableAllocs); err != nil {
			return err
		}
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

// UpdateAllocsFromClientTxn applies what a client reports: ClientStatus, ClientDescription,
// TaskStates and (when sent) NetworkStatus of each allocation, nothing else. Allocations that no longer exist (their job was
// purged) are skipped.
func (s *StateStore) UpdateAllocsFromClientTxn(txn *Txn, allocs []*structs.Allocation, updatedAt int64) error {
	touched := jobSet{}
	for _, alloc := range allocs {
		existing, err := allocByIDTxn(txn.Txn, nil, alloc.ID)
		if err != nil {
			return err
		}
		if existing == nil {
			continue
		}
		updated := existing.Copy()
		updated.ClientStatus = alloc.ClientStatus
		updated.ClientDescription = alloc.ClientDescription
		updated.TaskStates = alloc.TaskStates
		if alloc.NetworkStatus != nil {
			updated.NetworkStatus = alloc.NetworkStatus
		}
		updated.ModifyIndex, updated.ModifyTime = txn.Index, updatedAt
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return fmt.Errorf("state: alloc client update: %w", err)
		}
		touched.add(updated.Namespace, updated.JobID)
	}
	if len(touched) == 0 {
		return nil
	}
	if err := txn.bumpIndex(tableAllocs); err != nil {
		return err
	}
	return s.reconcileJobsTxn(txn, touched, nil)
}

// markNodeAllocsLostTxn marks every allocation of a down node that its client had not finished
// as lost, and returns the jobs they belong to.
func (s *StateStore) markNodeAllocsLostTxn(txn *Txn, nodeID string, updatedAt int64) (jobSet, error) {
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
		updated.ClientStatus = structs.AllocClientStatusLost
		updated.ClientDescription = "alloc is lost since its node is down"
		updated.ModifyIndex, updated.ModifyTime = txn.Index, updatedAt
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return nil, fmt.Errorf("state: alloc lost: %w", err)
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
	}
	if len(allocs) == 0 {
		return nil
	}
	return txn.bumpIndex(tableAllocs)
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

// reconcileJobSummaryTxn recounts a job's allocations by group and client status. Queued is
// kept unless queued gives new values.
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
	out := all[:0]
	for _, a := range all {
		if namespace == structs.AllNamespacesSentinel || a.Namespace == namespace {
			out = append(out, a)
		}
	}
	return out, nil
}

func allocsBy(txn *memdb.Txn, ws memdb.WatchSet, what, index string, args ...any) ([]*structs.Allocation, error) {
	iter, err := txn.Get(tableAllocs, index, args...)
	if err != nil {
		return nil, fmt.Errorf("state: %s: %w", what, err)
	}
	ws.Add(iter.WatchCh())
	out := collect[*structs.Allocation](iter)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreateIndex != out[j].CreateIndex {
			return out[i].CreateIndex > out[j].CreateIndex
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// UpdateAllocsDesiredTransitionsTxn merges each transition into its allocation's (a field the
// request leaves nil keeps its value) and stores the evaluations that act on them. Allocations
// that no longer exist are skipped.
func (s *StateStore) UpdateAllocsDesiredTransitionsTxn(txn *Txn, transitions map[string]*api.DesiredTransition, evals []*structs.Evaluation) error {
	touched := false
	for id, tr := range transitions {
		if tr == nil {
			continue
		}
		existing, err := allocByIDTxn(txn.Txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil {
			continue
		}
		updated := existing.Copy()
		mergeTransition(&updated.DesiredTransition, tr)
		updated.ModifyIndex = txn.Index
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return fmt.Errorf("state: alloc desired transition: %w", err)
		}
		touched = true
	}
	if touched {
		if err := txn.bumpIndex(tableAllocs); err != nil {
			return err
		}
	}
	return s.UpsertEvalsTxn(txn, evals)
}

func mergeTransition(dst *api.DesiredTransition, src *api.DesiredTransition) {
	for _, f := range []struct{ dst, src **bool }{
		{&dst.Migrate, &src.Migrate},
		{&dst.Reschedule, &src.Reschedule},
		{&dst.ForceReschedule, &src.ForceReschedule},
		{&dst.NoShutdownDelay, &src.NoShutdownDelay},
	} {
		if *f.src != nil {
			v := **f.src
			*f.dst = &v
		}
	}
}
