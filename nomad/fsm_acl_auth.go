package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerACLAuthCommands() {
	f.registerCommand(structs.ACLAuthMethodUpsertRequestType, f.applyACLAuthMethodUpsert)
	f.registerCommand(structs.ACLAuthMethodDeleteRequestType, f.applyACLAuthMethodDelete)
	f.registerCommand(structs.ACLBindingRuleUpsertRequestType, f.applyACLBindingRuleUpsert)
	f.registerCommand(structs.ACLBindingRuleDeleteRequestType, f.applyACLBindingRuleDelete)
}

func (f *FSM) applyACLAuthMethodUpsert(buf []byte, index uint64) any {
	var req structs.ACLAuthMethodUpsertRequest
	decode(buf, &req, structs.ACLAuthMethodUpsertRequestType, index)
	return f.applyInTxn(structs.ACLAuthMethodUpsertRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.UpsertACLAuthMethodsTxn(txn, req.AuthMethods)
	})
}

func (f *FSM) applyACLAuthMethodDelete(buf []byte, index uint64) any {
	var req structs.ACLAuthMethodDeleteRequest
	decode(buf, &req, structs.ACLAuthMethodDeleteRequestType, index)
	return f.applyInTxn(structs.ACLAuthMethodDeleteRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.DeleteACLAuthMethodsTxn(txn, req.Names)
	})
}

func (f *FSM) applyACLBindingRuleUpsert(buf []byte, index uint64) any {
	var req structs.ACLBindingRuleUpsertRequest
	decode(buf, &req, structs.ACLBindingRuleUpsertRequestType, index)
	return f.applyInTxn(structs.ACLBindingRuleUpsertRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.UpsertACLBindingRulesTxn(txn, req.BindingRules)
	})
}

func (f *FSM) applyACLBindingRuleDelete(buf []byte, index uint64) any {
	var req structs.ACLBindingRuleDeleteRequest
	decode(buf, &req, structs.ACLBindingRuleDeleteRequestType, index)
	return f.applyInTxn(structs.ACLBindingRuleDeleteRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.DeleteACLBindingRulesTxn(txn, req.IDs)
	})
}
