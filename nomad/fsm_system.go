package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerSystemCommands() {
	f.registerCommand(structs.ReconcileJobSummariesRequestType, f.applyReconcileJobSummaries)
}

func (f *FSM) applyReconcileJobSummaries(buf []byte, index uint64) any {
	var req structs.ReconcileJobSummariesRequest
	decode(buf, &req, structs.ReconcileJobSummariesRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.ReconcileJobSummariesRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if err := store.ReconcileJobSummariesTxn(txn); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
