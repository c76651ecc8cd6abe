package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerACLAuthCommands() {
	handle(f, structs.ACLAuthMethodUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLAuthMethodUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLAuthMethodsTxn(txn, req.AuthMethods)
	})
	handle(f, structs.ACLAuthMethodDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLAuthMethodDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLAuthMethodsTxn(txn, req.Names)
	})
	handle(f, structs.ACLBindingRuleUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLBindingRuleUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLBindingRulesTxn(txn, req.BindingRules)
	})
	handle(f, structs.ACLBindingRuleDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLBindingRuleDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLBindingRulesTxn(txn, req.IDs)
	})
}
