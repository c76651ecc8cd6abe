package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerNamespaceCommands() {
	handle(f, structs.NamespaceUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.NamespaceUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertNamespacesTxn(txn, req.Namespaces)
	})
	handle(f, structs.NamespaceDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.NamespaceDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteNamespacesTxn(txn, req.Namespaces)
	})
}
