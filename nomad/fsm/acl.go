package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerACLCommands() {
	handle(f, structs.ACLPolicyUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLPolicyUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLPoliciesTxn(txn, req.Policies)
	})
	handle(f, structs.ACLPolicyDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLPolicyDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLPoliciesTxn(txn, req.Names)
	})
	handle(f, structs.ACLTokenUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLTokenUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLTokensTxn(txn, req.Tokens)
	})
	handle(f, structs.ACLTokenDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLTokenDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLTokensTxn(txn, req.AccessorIDs)
	})
	handle(f, structs.ACLTokenBootstrapRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLTokenBootstrapRequest) error {
		return s.BootstrapACLTokenTxn(txn, req.ResetIndex, req.Token)
	})
	handle(f, structs.ACLRoleUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLRoleUpsertRequest) error {
		txn.Meta.Actor = req.Actor
		return s.UpsertACLRolesTxn(txn, req.Roles)
	})
	handle(f, structs.ACLRoleDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ACLRoleDeleteRequest) error {
		txn.Meta.Actor = req.Actor
		return s.DeleteACLRolesTxn(txn, req.IDs)
	})
	handle(f, structs.OneTimeTokenUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.OneTimeTokenUpsertRequest) error {
		return s.UpsertOneTimeTokenTxn(txn, req.Token)
	})
	handle(f, structs.OneTimeTokenDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.OneTimeTokenDeleteRequest) error {
		return s.DeleteOneTimeTokensTxn(txn, req.Secrets, req.Exchange)
	})
}
