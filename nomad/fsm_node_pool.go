package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerNodePoolCommands() {
	f.registerCommand(structs.NodePoolUpsertRequestType, f.applyNodePoolUpsert)
	f.registerCommand(structs.NodePoolDeleteRequestType, f.applyNodePoolDelete)
}

func (f *FSM) applyNodePoolUpsert(buf []byte, index uint64) any {
	var req structs.NodePoolUpsertRequest
	decode(buf, &req, structs.NodePoolUpsertRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodePoolUpsertRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if err := store.UpsertNodePoolsTxn(txn, req.NodePools); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyNodePoolDelete(buf []byte, index uint64) any {
	var req structs.NodePoolDeleteRequest
	decode(buf, &req, structs.NodePoolDeleteRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodePoolDeleteRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if err := store.DeleteNodePoolsTxn(txn, req.Names); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
