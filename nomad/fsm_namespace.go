package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerNamespaceCommands() {
	f.registerCommand(structs.NamespaceUpsertRequestType, f.applyNamespaceUpsert)
	f.registerCommand(structs.NamespaceDeleteRequestType, f.applyNamespaceDelete)
}

func (f *FSM) applyNamespaceUpsert(buf []byte, index uint64) any {
	var req structs.NamespaceUpsertRequest
	decode(buf, &req, structs.NamespaceUpsertRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NamespaceUpsertRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if err := store.UpsertNamespacesTxn(txn, req.Namespaces); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyNamespaceDelete(buf []byte, index uint64) any {
	var req structs.NamespaceDeleteRequest
	decode(buf, &req, structs.NamespaceDeleteRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NamespaceDeleteRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if err := store.DeleteNamespacesTxn(txn, req.Namespaces); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
