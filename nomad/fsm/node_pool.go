package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerNodePoolCommands() {
	handle(f, structs.NodePoolUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.NodePoolUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertNodePoolsTxn(txn, req.NodePools)
	})
	handle(f, structs.NodePoolDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.NodePoolDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteNodePoolsTxn(txn, req.Names)
	})
}
