package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const (
	tablePurgeHistory = "purge_history"
	// indexPurgedAlloc finds the record that holds an allocation of a removed job.
	indexPurgedAlloc = "alloc"
)

func init() {
	registerTable(tablePurgeHistory, &structs.PurgeRecord{},
		idIndex(field("ID")), optionalIndex(indexPurgedAlloc, purgedAllocIndexer{}))
}

// purgedAllocIndexer indexes a record by the IDs of its allocations.
type purgedAllocIndexer struct{}

func (purgedAllocIndexer) FromObject(obj any) (bool, [][]byte, error) {
	rec, ok := obj.(*structs.PurgeRecord)
	if !ok {
		return false, nil, fmt.Errorf("state: purge record index: unexpected %T", obj)
	}
	var keys [][]byte
	for _, a := range rec.Allocations {
		keys = append(keys, []byte(a.ID+"\x00"))
	}
	return len(keys) > 0, keys, nil
}

func (purgedAllocIndexer) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("state: purge record index: one allocation ID expected")
	}
	id, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("state: purge record index: allocation ID must be a string, not %T", args[0])
	}
	return []byte(id + "\x00"), nil
}

// PurgeRecordByAllocIDTxn finds the record holding the allocation alloc of a removed job; nil
// when no record holds it.
func (s *StateStore) PurgeRecordByAllocIDTxn(txn *Txn, allocID string) (*structs.PurgeRecord, error) {
	return first[*structs.PurgeRecord](txn.Txn, nil, "purge record lookup by allocation", tablePurgeHistory, indexPurgedAlloc, allocID)
}

// PurgeRecordByAllocID is PurgeRecordByAllocIDTxn outside a write.
func (s *StateStore) PurgeRecordByAllocID(allocID string) (*structs.PurgeRecord, error) {
	return first[*structs.PurgeRecord](s.db.Txn(false), nil, "purge record lookup by allocation", tablePurgeHistory, indexPurgedAlloc, allocID)
}

// updatePurgedAllocTxn records a client's report of an allocation whose job was removed: the
// record that holds it keeps the allocation's new state. Reports from a node the allocation
// was not placed on are ignored. It reports whether the record changed.
func (s *StateStore) updatePurgedAllocTxn(txn *Txn, nodeID string, report *structs.Allocation, updatedAt int64) (bool, error) {
	rec, err := s.PurgeRecordByAllocIDTxn(txn, report.ID)
	if err != nil || rec == nil {
		return false, err
	}
	updated := *rec
	updated.Allocations = make([]*structs.PurgedAllocation, len(rec.Allocations))
	changed := false
	for i, a := range rec.Allocations {
		updated.Allocations[i] = a
		if a.ID != report.ID || a.NodeID != nodeID {
			continue
		}
		c := *a
		c.ClientStatus, c.ClientDescription, c.TaskStates = report.ClientStatus, report.ClientDescription, report.TaskStates
		c.ModifyIndex, c.ModifyTime = txn.Index, updatedAt
		updated.Allocations[i] = &c
		changed = true
	}
	if !changed {
		return false, nil
	}
	updated.ModifyIndex = txn.Index
	if err := txn.Insert(tablePurgeHistory, &updated); err != nil {
		return false, fmt.Errorf("state: purge record update: %w", err)
	}
	return true, txn.bumpIndex(tablePurgeHistory)
}

// InsertPurgeRecordTxn writes the record of a job removal in the removing transaction.
func (s *StateStore) InsertPurgeRecordTxn(txn *Txn, rec *structs.PurgeRecord) error {
	if rec.ID == "" {
		// The leader must fix the ID before the apply; a missing one is a programming error
		// that would break the record-with-removal invariant, so the whole removal fails.
		return fmt.Errorf("state: purge record for %s/%s has no ID", rec.Namespace, rec.JobID)
	}
	rec.CreateIndex, rec.ModifyIndex = txn.Index, txn.Index
	if err := s.chainPurgeRecordTxn(txn, rec); err != nil {
		return err
	}
	if err := txn.Insert(tablePurgeHistory, rec); err != nil {
		return fmt.Errorf("state: purge record insert: %w", err)
	}
	return txn.bumpIndex(tablePurgeHistory)
}

// DeletePurgeRecordsTxn removes records by ID; unknown IDs are ignored, and so are records
// newer in the chain than one that stays (retention removes the oldest part of the chain
// only). The newest chained record removed becomes the chain's checkpoint, so what remains
// still verifies.
func (s *StateStore) DeletePurgeRecordsTxn(txn *Txn, ids []string) error {
	records, err := prunablePurgeRecordsTxn(txn, ids)
	if err != nil {
		return err
	}
	var last *structs.PurgeRecord
	for _, r := range records {
		if err := txn.Delete(tablePurgeHistory, r); err != nil {
			return fmt.Errorf("state: purge record delete: %w", err)
		}
		if r.ChainSeq != 0 {
			last = r
		}
	}
	if last != nil {
		if err := checkpointPurgeChainTxn(txn, last); err != nil {
			return err
		}
	}
	return txn.bumpIndex(tablePurgeHistory)
}

// PurgeRecordByID reads one record; nil when unknown.
func (s *StateStore) PurgeRecordByID(ws memdb.WatchSet, id string) (*structs.PurgeRecord, error) {
	return first[*structs.PurgeRecord](s.db.Txn(false), ws, "purge record lookup", tablePurgeHistory, indexID, id)
}

// PurgeRecords lists every record, newest first.
func (s *StateStore) PurgeRecords(ws memdb.WatchSet) ([]*structs.PurgeRecord, error) {
	out, err := list[*structs.PurgeRecord](s.db.Txn(false), ws, "purge record list", tablePurgeHistory, indexID)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreateIndex != out[j].CreateIndex {
			return out[i].CreateIndex > out[j].CreateIndex
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
