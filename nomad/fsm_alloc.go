package nomad

import (
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerAllocCommands() {
	f.registerCommand(structs.ApplyPlanResultsRequestType, f.applyPlanResults)
	f.registerCommand(structs.AllocClientUpdateRequestType, f.applyAllocClientUpdate)
	f.registerCommand(structs.AllocUpdateDesiredTransitionRequestType, f.applyAllocUpdateDesiredTransition)
}

// applyPlanResults writes one scheduling decision and the evaluation that made it together,
// so a leader change can never leave an evaluation complete without its allocations, or
// allocations placed twice.
func (f *FSM) applyPlanResults(buf []byte, index uint64) any {
	var req structs.ApplyPlanResultsRequest
	decode(buf, &req, structs.ApplyPlanResultsRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.ApplyPlanResultsRequestType, index, nil)
	defer txn.Abort()
	if err := store.ApplyPlanResultsTxn(txn, &req); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyAllocClientUpdate(buf []byte, index uint64) any {
	var req structs.AllocUpdateRequest
	decode(buf, &req, structs.AllocClientUpdateRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.AllocClientUpdateRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpdateAllocsFromClientTxn(txn, req.Alloc, req.UpdatedAt); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyAllocUpdateDesiredTransition(buf []byte, index uint64) any {
	var req structs.AllocUpdateDesiredTransitionRequest
	decode(buf, &req, structs.AllocUpdateDesiredTransitionRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.AllocUpdateDesiredTransitionRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpdateAllocsDesiredTransitionsTxn(txn, req.Allocs, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
