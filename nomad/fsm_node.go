package nomad

import (
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerNodeCommands() {
	f.registerCommand(structs.NodeRegisterRequestType, f.applyNodeRegister)
	f.registerCommand(structs.NodeUpdateStatusRequestType, f.applyNodeUpdateStatus)
}

func (f *FSM) applyNodeRegister(buf []byte, index uint64) any {
	var req structs.NodeRegisterRequest
	decode(buf, &req, structs.NodeRegisterRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodeRegisterRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpsertNodeTxn(txn, req.Node); err != nil {
		return err
	}
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyNodeUpdateStatus(buf []byte, index uint64) any {
	var req structs.NodeUpdateStatusRequest
	decode(buf, &req, structs.NodeUpdateStatusRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodeUpdateStatusRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpdateNodeStatusTxn(txn, req.NodeID, req.Status, req.UpdatedAt); err != nil {
		return err
	}
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
