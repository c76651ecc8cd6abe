package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// ApplyAllocDelete removes the finished allocations the allocation GC chose, in one
// transaction.
func (s *StateStore) ApplyAllocDelete(index uint64, req *structs.AllocDeleteRequest) error {
	return s.apply(structs.AllocDeleteRequestType, index, nil, func(txn *Txn) error {
		return s.DeleteAllocsTxn(txn, req.Allocs)
	})
}

// DeleteAllocsTxn removes allocations by ID, with their service registrations, and adds each
// to its job's tally of collected allocations, so the job's summary keeps counting it. Only
// an allocation its client has finished is removed: the leader chose it from a read of the
// state, and one that is no longer finished when the entry applies (a lost allocation whose
// node came back) is kept, on every server alike. Unknown IDs are skipped.
func (s *StateStore) DeleteAllocsTxn(txn *Txn, ids []string) error {
	touched := jobSet{}
	tally := map[structs.NamespacedID]map[string]structs.CollectedAllocCounts{}
	removed := false
	for _, id := range ids {
		alloc, err := allocByIDTxn(txn.Txn, nil, id)
		if err != nil {
			return err
		}
		if alloc == nil || !alloc.ClientTerminalStatus() {
			continue
		}
		if err := txn.Delete(tableAllocs, alloc); err != nil {
			return fmt.Errorf("state: alloc delete: %w", err)
		}
		if err := s.deleteAllocServiceRegistrationsTxn(txn, alloc.ID); err != nil {
			return err
		}
		removed = true
		key := structs.NamespacedID{Namespace: alloc.Namespace, ID: alloc.JobID}
		groups := tally[key]
		if groups == nil {
			groups = map[string]structs.CollectedAllocCounts{}
			tally[key] = groups
		}
		c := groups[alloc.TaskGroup]
		switch alloc.ClientStatus {
		case structs.AllocClientStatusComplete:
			c.Complete++
		case structs.AllocClientStatusFailed:
			c.Failed++
		case structs.AllocClientStatusLost:
			c.Lost++
		}
		groups[alloc.TaskGroup] = c
		touched[key] = true
	}
	if !removed {
		return nil
	}
	if err := txn.bumpIndex(tableAllocs); err != nil {
		return err
	}
	keys := make([]structs.NamespacedID, 0, len(tally))
	for key := range tally {
		keys = append(keys, key)
	}
	// Map order is random; the FSM must write in the same order on every server.
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, key := range keys {
		if err := s.addCollectedAllocsTxn(txn, key, tally[key]); err != nil {
			return err
		}
	}
	return s.reconcileJobsTxn(txn, touched, nil)
}

// addCollectedAllocsTxn adds counts to the job's tally. A job that no longer exists gets
// none: its tally would outlive it, with nothing to remove it.
func (s *StateStore) addCollectedAllocsTxn(txn *Txn, key structs.NamespacedID, counts map[string]structs.CollectedAllocCounts) error {
	job, err := jobByIDTxn(txn.Txn, nil, key.Namespace, key.ID)
	if err != nil || job == nil {
		return err
	}
	prev, err := jobCollectedAllocsTxn(txn, key.Namespace, key.ID)
	if err != nil {
		return err
	}
	next := &structs.JobCollectedAllocs{
		Namespace: key.Namespace, JobID: key.ID, Groups: map[string]structs.CollectedAllocCounts{},
		CreateIndex: txn.Index, ModifyIndex: txn.Index,
	}
	if prev != nil {
		next.CreateIndex = prev.CreateIndex
		for name, c := range prev.Groups {
			next.Groups[name] = c
		}
	}
	for name, c := range counts {
		sum := next.Groups[name]
		sum.Complete += c.Complete
		sum.Failed += c.Failed
		sum.Lost += c.Lost
		next.Groups[name] = sum
	}
	if err := txn.Insert(tableJobCollectedAllocs, next); err != nil {
		return fmt.Errorf("state: collected allocs insert: %w", err)
	}
	return txn.bumpIndex(tableJobCollectedAllocs)
}

// deleteJobCollectedAllocsTxn drops a removed job's tally.
func deleteJobCollectedAllocsTxn(txn *Txn, namespace, id string) error {
	n, err := txn.DeleteAll(tableJobCollectedAllocs, indexID, namespace, id)
	if err != nil {
		return fmt.Errorf("state: collected allocs delete: %w", err)
	}
	return txn.bumpIndexIf(n > 0, tableJobCollectedAllocs)
}

func jobCollectedAllocsTxn(txn *Txn, namespace, id string) (*structs.JobCollectedAllocs, error) {
	return first[*structs.JobCollectedAllocs](txn.Txn, nil, "collected allocs lookup", tableJobCollectedAllocs, indexID, namespace, id)
}

// JobCollectedAllocs reads a job's tally of collected allocations; nil when none was
// collected.
func (s *StateStore) JobCollectedAllocs(ws memdb.WatchSet, namespace, id string) (*structs.JobCollectedAllocs, error) {
	return first[*structs.JobCollectedAllocs](s.db.Txn(false), ws, "collected allocs lookup", tableJobCollectedAllocs, indexID, namespace, id)
}
