package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// SetSchedulerConfigTxn stores the scheduler configuration. With cas it stores only while
// the stored configuration's ModifyIndex is config.ModifyIndex (0 when none is stored) and
// reports false, writing nothing, otherwise.
func (s *StateStore) SetSchedulerConfigTxn(txn *Txn, config *structs.SchedulerConfiguration, cas bool) (bool, error) {
	raw, err := txn.First(tableSchedulerConfig, indexID, schedulerConfigKey)
	if err != nil {
		return false, fmt.Errorf("state: scheduler config lookup: %w", err)
	}
	var existing *structs.SchedulerConfiguration
	if raw != nil {
		existing = raw.(*schedulerConfigRow).Config
	}
	if cas {
		current := uint64(0)
		if existing != nil {
			current = existing.ModifyIndex
		}
		if current != config.ModifyIndex {
			return false, nil
		}
	}
	stored := *config
	stored.CreateIndex, stored.ModifyIndex = txn.Index, txn.Index
	if existing != nil {
		stored.CreateIndex = existing.CreateIndex
	}
	if err := txn.Insert(tableSchedulerConfig, &schedulerConfigRow{ID: schedulerConfigKey, Config: &stored}); err != nil {
		return false, fmt.Errorf("state: scheduler config insert: %w", err)
	}
	return true, txn.bumpIndex(tableSchedulerConfig)
}

// SchedulerConfig reads the stored configuration; nil when none was ever set.
func (s *StateStore) SchedulerConfig(ws memdb.WatchSet) (*structs.SchedulerConfiguration, error) {
	row, err := first[*schedulerConfigRow](s.db.Txn(false), ws, "scheduler config lookup", tableSchedulerConfig, indexID, schedulerConfigKey)
	if err != nil || row == nil {
		return nil, err
	}
	c := *row.Config
	return &c, nil
}

// ApplySchedulerSetConfig is the scheduler configuration write of the Raft log, one
// transaction, committed only when the configuration was stored. It answers whether it was:
// a lost check-and-set is an answer (false), not an error.
func (s *StateStore) ApplySchedulerSetConfig(index uint64, req *structs.SchedulerSetConfigRequest) (bool, error) {
	txn := s.WriteTxn(structs.SchedulerConfigRequestType, index, &TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	updated, err := s.SetSchedulerConfigTxn(txn, &req.Config, req.CAS)
	if err != nil {
		return false, err
	}
	if updated {
		txn.Commit()
	}
	return updated, nil
}
