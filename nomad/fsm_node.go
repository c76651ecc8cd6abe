package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerNodeCommands() {
	f.registerCommand(structs.NodeRegisterRequestType, f.applyNodeRegister)
	f.registerCommand(structs.NodeUpdateStatusRequestType, f.applyNodeUpdateStatus)
}

func (f *FSM) applyNodeRegister(buf []byte, index uint64) any {
	var req structs.NodeRegisterRequest
	decode(buf, &req, structs.NodeRegisterRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodeRegisterRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpsertNodeTxn(txn, req.Node); err != nil {
		return err
	}
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyNodeUpdateStatus(buf []byte, index uint64) any {
	var req structs.NodeUpdateStatusRequest
	decode(buf, &req, structs.NodeUpdateStatusRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodeUpdateStatusRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpdateNodeStatusTxn(txn, req.NodeID, req.Status, req.UpdatedAt); err != nil {
		return err
	}
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) registerNodeLifecycleCommands() {
	f.registerCommand(structs.NodeUpdateDrainRequestType, f.applyNodeUpdateDrain)
	f.registerCommand(structs.BatchNodeUpdateDrainRequestType, f.applyBatchNodeUpdateDrain)
	f.registerCommand(structs.NodeUpdateEligibilityRequestType, f.applyNodeUpdateEligibility)
	f.registerCommand(structs.NodeDeregisterRequestType, f.applyNodeDeregister)
	f.registerCommand(structs.AllocUpdateDesiredTransitionRequestType, f.applyAllocUpdateDesiredTransition)
}

func (f *FSM) applyNodeUpdateDrain(buf []byte, index uint64) any {
	var req structs.NodeUpdateDrainRequest
	decode(buf, &req, structs.NodeUpdateDrainRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodeUpdateDrainRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if err := store.UpdateNodeDrainTxn(txn, req.NodeID, req.DrainStrategy, req.MarkEligible, req.Meta, req.Actor, req.UpdatedAt); err != nil {
		return err
	}
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyBatchNodeUpdateDrain(buf []byte, index uint64) any {
	var req structs.BatchNodeUpdateDrainRequest
	decode(buf, &req, structs.BatchNodeUpdateDrainRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.BatchNodeUpdateDrainRequestType, index, nil)
	defer txn.Abort()
	if err := store.CompleteNodeDrainsTxn(txn, req.Complete, req.UpdatedAt); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyNodeUpdateEligibility(buf []byte, index uint64) any {
	var req structs.NodeUpdateEligibilityRequest
	decode(buf, &req, structs.NodeUpdateEligibilityRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodeUpdateEligibilityRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpdateNodeEligibilityTxn(txn, req.NodeID, req.Eligibility, req.UpdatedAt); err != nil {
		return err
	}
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyNodeDeregister(buf []byte, index uint64) any {
	var req structs.NodeDeregisterRequest
	decode(buf, &req, structs.NodeDeregisterRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.NodeDeregisterRequestType, index, nil)
	defer txn.Abort()
	if err := store.DeleteNodesTxn(txn, req.NodeIDs, req.UpdatedAt); err != nil {
		return err
	}
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
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
	if err := store.UpdateAllocsDesiredTransitionTxn(txn, req.Allocs, req.UpdatedAt); err != nil {
		return err
	}
	if err := store.UpsertEvalsTxn(txn, req.Evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
