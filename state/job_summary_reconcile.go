package state

import (
	"fmt"
	"sort"

	"github.com/nomadfork/nomad/structs"
)

// ReconcileJobSummariesTxn rebuilds every job's summary from its current version's groups
// and its allocations, the repair upstream's `system reconcile summaries` performs. Queued
// counts are kept: they are the scheduler's, not the allocations'.
func (s *StateStore) ReconcileJobSummariesTxn(txn *Txn) error {
	iter, err := txn.Get(tableJobs, indexID)
	if err != nil {
		return fmt.Errorf("state: jobs scan: %w", err)
	}
	var jobs []*structs.Job
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		jobs = append(jobs, raw.(*structs.Job))
	}
	// The table iterates in index order already; sorting states the FSM's need for one order.
	sort.Slice(jobs, func(i, j int) bool {
		if jobs[i].Namespace != jobs[j].Namespace {
			return jobs[i].Namespace < jobs[j].Namespace
		}
		return jobs[i].ID < jobs[j].ID
	})
	for _, job := range jobs {
		if err := s.upsertJobSummaryTxn(txn, job); err != nil {
			return err
		}
		if err := s.reconcileJobSummaryTxn(txn, job.Namespace, job.ID, nil); err != nil {
			return err
		}
	}
	return nil
}
