package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// AutopilotConfig returns the stored autopilot configuration, nil when none was ever set, and
// the table's index.
func (s *StateStore) AutopilotConfig(ws memdb.WatchSet) (uint64, *structs.AutopilotConfig, error) {
	txn := s.db.Txn(false)
	watch, raw, err := txn.FirstWatch(tableAutopilot, indexID)
	if err != nil {
		return 0, nil, fmt.Errorf("state: autopilot config lookup: %w", err)
	}
	ws.Add(watch)
	idx := s.Index(tableAutopilot)
	if raw == nil {
		return idx, nil, nil
	}
	c := *raw.(*structs.AutopilotConfig)
	return idx, &c, nil
}

// SetAutopilotConfigTxn stores config. With cas it is stored only when the stored row's
// ModifyIndex equals config.ModifyIndex (0 when none is stored); the answer says whether it
// was.
func (s *StateStore) SetAutopilotConfigTxn(txn *Txn, config *structs.AutopilotConfig, cas bool) (bool, error) {
	if config == nil {
		return false, structs.BadRequest("autopilot configuration missing")
	}
	raw, err := txn.First(tableAutopilot, indexID)
	if err != nil {
		return false, fmt.Errorf("state: autopilot config lookup: %w", err)
	}
	stored := *config
	stored.CreateIndex, stored.ModifyIndex = txn.Index, txn.Index
	if raw != nil {
		existing := raw.(*structs.AutopilotConfig)
		if cas && existing.ModifyIndex != config.ModifyIndex {
			return false, nil
		}
		stored.CreateIndex = existing.CreateIndex
		if err := txn.Delete(tableAutopilot, existing); err != nil {
			return false, fmt.Errorf("state: autopilot config replace: %w", err)
		}
	} else if cas && config.ModifyIndex != 0 {
		return false, nil
	}
	if err := txn.Insert(tableAutopilot, &stored); err != nil {
		return false, fmt.Errorf("state: autopilot config insert: %w", err)
	}
	return true, txn.bumpIndex(tableAutopilot)
}

// ApplyAutopilotSetConfig is the autopilot configuration write of the Raft log, one
// transaction. It answers whether the configuration was stored: a lost check-and-set is an
// answer (false), not an error.
func (s *StateStore) ApplyAutopilotSetConfig(index uint64, req *structs.AutopilotSetConfigRequest) (bool, error) {
	txn := s.WriteTxn(structs.AutopilotRequestType, index, &TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	updated, err := s.SetAutopilotConfigTxn(txn, &req.Config, req.CAS)
	if err != nil {
		return false, err
	}
	txn.Commit()
	return updated, nil
}
