package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

const tablePurgeHistory = "purge_history"

func init() {
	registerTable(&memdb.TableSchema{
		Name: tablePurgeHistory,
		Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		},
	}, &structs.PurgeRecord{})
}

// InsertPurgeRecordTxn writes the record of a job removal in the removing transaction.
func (s *StateStore) InsertPurgeRecordTxn(txn *Txn, rec *structs.PurgeRecord) error {
	if rec.ID == "" {
		// The leader must fix the ID before the apply; a missing one is a programming error
		// that would break the record-with-removal invariant, so the whole removal fails.
		return fmt.Errorf("state: purge record for %s/%s has no ID", rec.Namespace, rec.JobID)
	}
	rec.CreateIndex = txn.Index
	if err := txn.Insert(tablePurgeHistory, rec); err != nil {
		return fmt.Errorf("state: purge record insert: %w", err)
	}
	return txn.bumpIndex(tablePurgeHistory)
}

// DeletePurgeRecordsTxn removes records by ID; unknown IDs are ignored.
func (s *StateStore) DeletePurgeRecordsTxn(txn *Txn, ids []string) error {
	for _, id := range ids {
		if _, err := txn.DeleteAll(tablePurgeHistory, indexID, id); err != nil {
			return fmt.Errorf("state: purge record delete: %w", err)
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
	iter, err := s.db.Txn(false).Get(tablePurgeHistory, indexID)
	if err != nil {
		return nil, fmt.Errorf("state: purge record list: %w", err)
	}
	ws.Add(iter.WatchCh())
	out := collect[*structs.PurgeRecord](iter)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreateIndex != out[j].CreateIndex {
			return out[i].CreateIndex > out[j].CreateIndex
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
