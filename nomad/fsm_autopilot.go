package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerAutopilotCommands() {
	f.registerCommand(structs.AutopilotRequestType, f.applyAutopilotSetConfig)
}

// applyAutopilotSetConfig answers whether the configuration was stored: a lost CAS is not an
// error, the caller reports Updated = false.
func (f *FSM) applyAutopilotSetConfig(buf []byte, index uint64) any {
	var req structs.AutopilotSetConfigRequest
	decode(buf, &req, structs.AutopilotRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.AutopilotRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	updated, err := store.SetAutopilotConfigTxn(txn, &req.Config, req.CAS)
	if err != nil {
		return err
	}
	txn.Commit()
	return updated
}
