package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerACLCommands() {
	f.registerCommand(structs.ACLPolicyUpsertRequestType, f.applyACLPolicyUpsert)
	f.registerCommand(structs.ACLPolicyDeleteRequestType, f.applyACLPolicyDelete)
	f.registerCommand(structs.ACLTokenUpsertRequestType, f.applyACLTokenUpsert)
	f.registerCommand(structs.ACLTokenDeleteRequestType, f.applyACLTokenDelete)
	f.registerCommand(structs.ACLTokenBootstrapRequestType, f.applyACLTokenBootstrap)
	f.registerCommand(structs.ACLRoleUpsertRequestType, f.applyACLRoleUpsert)
	f.registerCommand(structs.ACLRoleDeleteRequestType, f.applyACLRoleDelete)
	f.registerCommand(structs.OneTimeTokenUpsertRequestType, f.applyOneTimeTokenUpsert)
	f.registerCommand(structs.OneTimeTokenDeleteRequestType, f.applyOneTimeTokenDelete)
}

func (f *FSM) applyOneTimeTokenUpsert(buf []byte, index uint64) any {
	var req structs.OneTimeTokenUpsertRequest
	decode(buf, &req, structs.OneTimeTokenUpsertRequestType, index)
	return f.applyInTxn(structs.OneTimeTokenUpsertRequestType, index, nil, func(s *state.StateStore, txn *state.Txn) error {
		return s.UpsertOneTimeTokenTxn(txn, req.Token)
	})
}

func (f *FSM) applyOneTimeTokenDelete(buf []byte, index uint64) any {
	var req structs.OneTimeTokenDeleteRequest
	decode(buf, &req, structs.OneTimeTokenDeleteRequestType, index)
	return f.applyInTxn(structs.OneTimeTokenDeleteRequestType, index, nil, func(s *state.StateStore, txn *state.Txn) error {
		return s.DeleteOneTimeTokensTxn(txn, req.Secrets, req.Exchange)
	})
}

// applyInTxn runs one store write in the entry's transaction and commits it when it succeeds.
func (f *FSM) applyInTxn(t structs.MessageType, index uint64, actor *structs.Actor, write func(*state.StateStore, *state.Txn) error) any {
	store := f.State()
	txn := store.WriteTxn(t, index, &state.TxnMeta{Actor: actor})
	defer txn.Abort()
	if err := write(store, txn); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyACLPolicyUpsert(buf []byte, index uint64) any {
	var req structs.ACLPolicyUpsertRequest
	decode(buf, &req, structs.ACLPolicyUpsertRequestType, index)
	return f.applyInTxn(structs.ACLPolicyUpsertRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.UpsertACLPoliciesTxn(txn, req.Policies)
	})
}

func (f *FSM) applyACLPolicyDelete(buf []byte, index uint64) any {
	var req structs.ACLPolicyDeleteRequest
	decode(buf, &req, structs.ACLPolicyDeleteRequestType, index)
	return f.applyInTxn(structs.ACLPolicyDeleteRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.DeleteACLPoliciesTxn(txn, req.Names)
	})
}

func (f *FSM) applyACLTokenUpsert(buf []byte, index uint64) any {
	var req structs.ACLTokenUpsertRequest
	decode(buf, &req, structs.ACLTokenUpsertRequestType, index)
	return f.applyInTxn(structs.ACLTokenUpsertRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.UpsertACLTokensTxn(txn, req.Tokens)
	})
}

func (f *FSM) applyACLTokenDelete(buf []byte, index uint64) any {
	var req structs.ACLTokenDeleteRequest
	decode(buf, &req, structs.ACLTokenDeleteRequestType, index)
	return f.applyInTxn(structs.ACLTokenDeleteRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.DeleteACLTokensTxn(txn, req.AccessorIDs)
	})
}

func (f *FSM) applyACLTokenBootstrap(buf []byte, index uint64) any {
	var req structs.ACLTokenBootstrapRequest
	decode(buf, &req, structs.ACLTokenBootstrapRequestType, index)
	return f.applyInTxn(structs.ACLTokenBootstrapRequestType, index, nil, func(s *state.StateStore, txn *state.Txn) error {
		return s.BootstrapACLTokenTxn(txn, req.ResetIndex, req.Token)
	})
}

func (f *FSM) applyACLRoleUpsert(buf []byte, index uint64) any {
	var req structs.ACLRoleUpsertRequest
	decode(buf, &req, structs.ACLRoleUpsertRequestType, index)
	return f.applyInTxn(structs.ACLRoleUpsertRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.UpsertACLRolesTxn(txn, req.Roles)
	})
}

func (f *FSM) applyACLRoleDelete(buf []byte, index uint64) any {
	var req structs.ACLRoleDeleteRequest
	decode(buf, &req, structs.ACLRoleDeleteRequestType, index)
	return f.applyInTxn(structs.ACLRoleDeleteRequestType, index, req.Actor, func(s *state.StateStore, txn *state.Txn) error {
		return s.DeleteACLRolesTxn(txn, req.IDs)
	})
}
