package state

import (
	"fmt"
	"net/http"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// UpsertPeriodicLaunchTxn records a launch of a periodic job. Launches only move forward: one
// not later than the recorded launch is refused with a conflict, so a launch a leader decided
// on cannot be applied twice (a retried entry, or a leader that lost its term mid-launch).
func (s *StateStore) UpsertPeriodicLaunchTxn(txn *Txn, launch *structs.PeriodicLaunch) error {
	if launch == nil {
		return nil
	}
	prev, err := first[*structs.PeriodicLaunch](txn.Txn, nil, "periodic launch lookup", tablePeriodicLaunch, indexID, launch.Namespace, launch.ID)
	if err != nil {
		return err
	}
	row := *launch
	row.CreateIndex, row.ModifyIndex = txn.Index, txn.Index
	if prev != nil {
		if !launch.Launch.After(prev.Launch) {
			return &structs.CodedError{Code: http.StatusConflict, Err: structs.ErrPeriodicLaunched,
				Msg: fmt.Sprintf("periodic job %q already launched at %s", launch.ID, prev.Launch.UTC().Format(time.RFC3339))}
		}
		row.CreateIndex = prev.CreateIndex
	}
	if err := txn.Insert(tablePeriodicLaunch, &row); err != nil {
		return fmt.Errorf("state: periodic launch insert: %w", err)
	}
	return txn.bumpIndex(tablePeriodicLaunch)
}

// deletePeriodicLaunchTxn forgets a purged job's launches.
func (s *StateStore) deletePeriodicLaunchTxn(txn *Txn, namespace, id string) error {
	return deleteAll(txn, "periodic launch", tablePeriodicLaunch, indexID, namespace, id)
}

// PeriodicLaunchByID reads a periodic job's last launch; nil when it never launched.
func (s *StateStore) PeriodicLaunchByID(ws memdb.WatchSet, namespace, id string) (*structs.PeriodicLaunch, error) {
	return first[*structs.PeriodicLaunch](s.db.Txn(false), ws, "periodic launch lookup", tablePeriodicLaunch, indexID, namespace, id)
}

// PeriodicLaunches lists every recorded launch, watching the table in ws.
func (s *StateStore) PeriodicLaunches(ws memdb.WatchSet) ([]*structs.PeriodicLaunch, error) {
	return list[*structs.PeriodicLaunch](s.db.Txn(false), ws, "periodic launches", tablePeriodicLaunch, indexID)
}

// refreshChildrenSummaryTxn recounts, by status, the children of parentID (periodic launches
// and dispatches) into the parent's summary, as upstream's summary reports them. It runs in
// each write that adds, removes or changes the status of a child; "" (not a child) and a
// parent without a summary (gone) are left alone.
func (s *StateStore) refreshChildrenSummaryTxn(txn *Txn, namespace, parentID string) error {
	if parentID == "" {
		return nil
	}
	raw, err := txn.First(tableJobSummary, indexID, namespace, parentID)
	if err != nil {
		return fmt.Errorf("state: job summary lookup: %w", err)
	}
	if raw == nil {
		return nil
	}
	iter, err := txn.Get(tableJobs, indexID+"_prefix", namespace, parentID+"/")
	if err != nil {
		return fmt.Errorf("state: child jobs: %w", err)
	}
	var counts structs.JobChildrenSummary
	for row := iter.Next(); row != nil; row = iter.Next() {
		child := row.(*structs.Job)
		if child.ParentID != parentID {
			continue
		}
		switch child.Status {
		case structs.JobStatusRunning:
			counts.Running++
		case structs.JobStatusDead:
			counts.Dead++
		default:
			counts.Pending++
		}
	}
	prev := raw.(*structs.JobSummary)
	if prev.Children != nil && *prev.Children == counts {
		return nil
	}
	updated := *prev
	updated.Children = &counts
	updated.ModifyIndex = txn.Index
	if err := txn.Insert(tableJobSummary, &updated); err != nil {
		return fmt.Errorf("state: job summary insert: %w", err)
	}
	return txn.bumpIndex(tableJobSummary)
}

// checkDispatchTokenTxn refuses a new dispatched child whose idempotency token a live (not
// stopped) sibling already carries: the leader answers such a dispatch with the sibling, and
// this check in the transaction keeps two racing dispatches from both creating one.
func (s *StateStore) checkDispatchTokenTxn(txn *Txn, job *structs.Job) error {
	if !job.Dispatched || job.DispatchIdempotencyToken == "" || job.ParentID == "" {
		return nil
	}
	iter, err := txn.Get(tableJobs, indexID+"_prefix", job.Namespace, job.ParentID+structs.DispatchLaunchSuffix)
	if err != nil {
		return fmt.Errorf("state: child jobs: %w", err)
	}
	for row := iter.Next(); row != nil; row = iter.Next() {
		c := row.(*structs.Job)
		if c.ID != job.ID && c.ParentID == job.ParentID && !c.Stop && c.DispatchIdempotencyToken == job.DispatchIdempotencyToken {
			return &structs.CodedError{Code: http.StatusConflict, Err: structs.ErrDispatchTokenUsed,
				Msg: fmt.Sprintf("idempotency token already used by dispatched job %q", c.ID)}
		}
	}
	return nil
}
