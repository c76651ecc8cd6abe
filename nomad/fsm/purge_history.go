package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerPurgeHistoryCommands() {
	handle(f, structs.PurgeRecordDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.PurgeRecordDeleteRequest) error {
		return s.DeletePurgeRecordsTxn(txn, req.IDs)
	})
}
