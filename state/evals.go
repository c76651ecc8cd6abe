package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const indexStatus = "status"

func init() {
	registerTable(tableEvals, &structs.Evaluation{},
		idIndex(field("ID")),
		lookupIndex(indexJob, namespaced(field("JobID"))),
		// The scheduler finds its work (pending and blocked evaluations) by status.
		lookupIndex(indexStatus, field("Status")),
	)
}

// UpsertEvalsTxn stores evaluations, keeping CreateIndex of ones already stored, and derives
// the status of their jobs again (a pending evaluation makes a job without running
// allocations pending).
func (s *StateStore) UpsertEvalsTxn(txn *Txn, evals []*structs.Evaluation) error {
	touched := jobSet{}
	for _, eval := range evals {
		touched.add(eval.Namespace, eval.JobID)
		existing, err := txn.First(tableEvals, indexID, eval.ID)
		if err != nil {
			return fmt.Errorf("state: eval lookup: %w", err)
		}
		eval.ModifyIndex = txn.Index
		if existing != nil {
			eval.CreateIndex = existing.(*structs.Evaluation).CreateIndex
		} else {
			eval.CreateIndex = txn.Index
		}
		if err := txn.Insert(tableEvals, eval); err != nil {
			return fmt.Errorf("state: eval insert: %w", err)
		}
	}
	if len(evals) == 0 {
		return nil
	}
	if err := txn.bumpIndex(tableEvals); err != nil {
		return err
	}
	return s.setJobStatusesTxn(txn, touched)
}

// CancelJobEvalsTxn marks the job's pending and blocked evaluations canceled: a stopped or
// purged job has nothing left to place, and without this a scheduler, after a restart or a
// leader change, would work through evaluations made for a job that is gone. modifyTime
// comes from the request (the FSM reads no clock).
func (s *StateStore) CancelJobEvalsTxn(txn *Txn, namespace, jobID, reason string, modifyTime int64) error {
	evals, err := evalsByJobTxn(txn.Txn, namespace, jobID)
	if err != nil {
		return err
	}
	var canceled []*structs.Evaluation
	for _, eval := range evals {
		if eval.Status != structs.EvalStatusPending && eval.Status != structs.EvalStatusBlocked {
			continue
		}
		c := eval.Copy()
		c.Status = structs.EvalStatusCancelled
		c.StatusDescription = reason
		c.ModifyTime = modifyTime
		canceled = append(canceled, c)
	}
	// Sorted so that every server writes the same rows in the same order.
	sort.Slice(canceled, func(i, j int) bool { return canceled[i].ID < canceled[j].ID })
	return s.UpsertEvalsTxn(txn, canceled)
}

// DeleteEvalsTxn removes evaluations by ID; unknown IDs are ignored.
func (s *StateStore) DeleteEvalsTxn(txn *Txn, ids []string) error {
	touched := jobSet{}
	for _, id := range ids {
		existing, err := txn.First(tableEvals, indexID, id)
		if err != nil {
			return fmt.Errorf("state: eval lookup: %w", err)
		}
		if existing == nil {
			continue
		}
		eval := existing.(*structs.Evaluation)
		touched.add(eval.Namespace, eval.JobID)
		if err := txn.Delete(tableEvals, eval); err != nil {
			return fmt.Errorf("state: eval delete: %w", err)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := txn.bumpIndex(tableEvals); err != nil {
		return err
	}
	return s.setJobStatusesTxn(txn, touched)
}

// EvalsByStatus lists the evaluations with status, oldest first: the order the scheduler
// works through them.
func (s *StateStore) EvalsByStatus(ws memdb.WatchSet, status string) ([]*structs.Evaluation, error) {
	out, err := list[*structs.Evaluation](s.db.Txn(false), ws, "evals by status", tableEvals, indexStatus, status)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreateIndex != out[j].CreateIndex {
			return out[i].CreateIndex < out[j].CreateIndex
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func evalsByJobTxn(txn *memdb.Txn, namespace, jobID string) ([]*structs.Evaluation, error) {
	return list[*structs.Evaluation](txn, nil, "evals of job", tableEvals, indexJob, namespace, jobID)
}

// EvalByID reads one evaluation; nil when unknown.
func (s *StateStore) EvalByID(ws memdb.WatchSet, id string) (*structs.Evaluation, error) {
	return first[*structs.Evaluation](s.db.Txn(false), ws, "eval lookup", tableEvals, indexID, id)
}

// EvalsByJob lists a job's evaluations, newest first.
func (s *StateStore) EvalsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Evaluation, error) {
	out, err := list[*structs.Evaluation](s.db.Txn(false), ws, "evals of job", tableEvals, indexJob, namespace, jobID)
	return evalsNewestFirst(out), err
}

// Evals lists evaluations in namespace ("*" for all), newest first, filtered by ID prefix.
func (s *StateStore) Evals(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Evaluation, error) {
	all, err := list[*structs.Evaluation](s.db.Txn(false), ws, "eval list", tableEvals, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return inNamespace(evalsNewestFirst(all), namespace, func(e *structs.Evaluation) string { return e.Namespace }), nil
}

func evalsNewestFirst(out []*structs.Evaluation) []*structs.Evaluation {
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreateIndex > out[j].CreateIndex })
	return out
}
