package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerSystemCommands() {
	handle(f, structs.ReconcileJobSummariesRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ReconcileJobSummariesRequest) error {
		txn.Meta.Actor = req.Actor
		return s.ReconcileJobSummariesTxn(txn)
	})
}
