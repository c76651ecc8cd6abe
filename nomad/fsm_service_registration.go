package nomad

import (
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerServiceRegistrationCommands() {
	f.registerCommand(structs.ServiceRegistrationUpsertRequestType, f.applyServiceRegistrationUpsert)
	f.registerCommand(structs.ServiceRegistrationDeleteRequestType, f.applyServiceRegistrationDelete)
}

func (f *FSM) applyServiceRegistrationUpsert(buf []byte, index uint64) any {
	var req structs.ServiceRegistrationUpsertRequest
	decode(buf, &req, structs.ServiceRegistrationUpsertRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.ServiceRegistrationUpsertRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpsertServiceRegistrationsTxn(txn, req.Services); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyServiceRegistrationDelete(buf []byte, index uint64) any {
	var req structs.ServiceRegistrationDeleteByIDRequest
	decode(buf, &req, structs.ServiceRegistrationDeleteRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.ServiceRegistrationDeleteRequestType, index, nil)
	defer txn.Abort()
	if err := store.DeleteServiceRegistrationByIDTxn(txn, req.Namespace, req.ID); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
