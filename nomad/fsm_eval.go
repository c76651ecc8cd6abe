package nomad

import (
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerEvalCommands() {
	f.registerCommand(structs.EvalUpdateRequestType, f.applyEvalUpdate)
	f.registerCommand(structs.EvalDeleteRequestType, f.applyEvalDelete)
}

func (f *FSM) applyEvalUpdate(buf []byte, index uint64) any {
	var req structs.EvalUpdateRequest
	decode(buf, &req, structs.EvalUpdateRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.EvalUpdateRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyEvalDelete(buf []byte, index uint64) any {
	var req structs.EvalDeleteRequest
	decode(buf, &req, structs.EvalDeleteRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.EvalDeleteRequestType, index, nil)
	defer txn.Abort()
	if err := store.DeleteEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
