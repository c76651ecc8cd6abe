package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerEvalCommands() {
	handle(f, structs.EvalUpdateRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EvalUpdateRequest) error {
		return s.UpsertEvalsTxn(txn, req.Evals)
	})
	handle(f, structs.EvalDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.EvalDeleteRequest) error {
		return s.DeleteEvalsTxn(txn, req.Evals)
	})
}
