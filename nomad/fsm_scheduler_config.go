package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerSchedulerConfigCommands() {
	f.registerCommand(structs.SchedulerConfigRequestType, f.applySchedulerConfig)
}

// applySchedulerConfig returns whether the configuration was stored (false: the
// check-and-set failed) or the domain error.
func (f *FSM) applySchedulerConfig(buf []byte, index uint64) any {
	var req structs.SchedulerSetConfigRequest
	decode(buf, &req, structs.SchedulerConfigRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.SchedulerConfigRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	updated, err := store.SetSchedulerConfigTxn(txn, &req.Config, req.CAS)
	if err != nil {
		return err
	}
	if updated {
		txn.Commit()
	}
	return updated
}
