package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerEventSinkCommands() {
	handle(f, structs.EventSinkUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EventSinkUpsertRequest) error {
		return s.UpsertEventSinkTxn(txn, req.Sink)
	})
	handle(f, structs.EventSinkDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EventSinkDeleteRequest) error {
		return s.DeleteEventSinkTxn(txn, req.ID)
	})
	handle(f, structs.EventSinkProgressRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EventSinkProgressRequest) error {
		return s.UpdateEventSinkProgressTxn(txn, req)
	})
}
