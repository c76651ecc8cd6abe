package nomad

import "github.com/nomadfork/nomad/structs"

func (f *FSM) registerPurgeHistoryCommands() {
	f.registerCommand(structs.PurgeRecordDeleteRequestType, f.applyPurgeRecordDelete)
}

func (f *FSM) applyPurgeRecordDelete(buf []byte, index uint64) any {
	var req structs.PurgeRecordDeleteRequest
	decode(buf, &req, structs.PurgeRecordDeleteRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.PurgeRecordDeleteRequestType, index, nil)
	defer txn.Abort()
	if err := store.DeletePurgeRecordsTxn(txn, req.IDs); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
