package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerVariableCommands() {
	f.registerCommand(structs.VarApplyStateRequestType, f.applyVariableOperation)
}

// applyVariableOperation stores what the leader encrypted; it never sees items in clear. It
// returns a *structs.VarApplyStateResponse (a failed check-and-set is an answer, not an
// error) or the domain error.
func (f *FSM) applyVariableOperation(buf []byte, index uint64) any {
	var req structs.VarApplyStateRequest
	decode(buf, &req, structs.VarApplyStateRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.VarApplyStateRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	resp, err := store.ApplyVariableTxn(txn, req.Op, req.Var)
	if err != nil {
		return err
	}
	if resp.Conflict == nil {
		txn.Commit()
	}
	return resp
}
