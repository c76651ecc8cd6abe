package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerJobCommands() {
	f.registerCommand(structs.JobRegisterRequestType, f.applyJobRegister)
	f.registerCommand(structs.JobDeregisterRequestType, f.applyJobDeregister)
	f.registerCommand(structs.JobBatchDeregisterRequestType, f.applyJobBatchDeregister)
	f.registerCommand(structs.JobVersionTagRequestType, f.applyJobVersionTag)
	f.registerCommand(structs.ScalingEventRegisterRequestType, f.applyScalingEventRegister)
	f.registerCommand(structs.JobStabilityRequestType, f.applyJobStability)
}

func (f *FSM) applyJobStability(buf []byte, index uint64) any {
	var req structs.JobStabilityRequest
	decode(buf, &req, structs.JobStabilityRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.JobStabilityRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if err := store.SetJobStabilityTxn(txn, req.Namespace, req.JobID, req.JobVersion, req.Stable); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyJobRegister(buf []byte, index uint64) any {
	var req structs.JobRegisterRequest
	decode(buf, &req, structs.JobRegisterRequestType, index)
	return f.State().ApplyJobRegister(index, &req)
}

func (f *FSM) applyJobDeregister(buf []byte, index uint64) any {
	var req structs.JobDeregisterRequest
	decode(buf, &req, structs.JobDeregisterRequestType, index)
	return f.State().ApplyJobDeregister(index, &req)
}

func (f *FSM) applyJobBatchDeregister(buf []byte, index uint64) any {
	var req structs.JobBatchDeregisterRequest
	decode(buf, &req, structs.JobBatchDeregisterRequestType, index)
	return f.State().ApplyJobBatchDeregister(index, &req)
}

func (f *FSM) applyJobVersionTag(buf []byte, index uint64) any {
	var req structs.JobTagRequest
	decode(buf, &req, structs.JobVersionTagRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.JobVersionTagRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	var tag *structs.JobVersionTag
	if !req.Unset {
		tag = req.Tag
	}
	if err := store.TagJobVersionTxn(txn, req.Namespace, req.JobID, req.Version, req.Name, tag); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyScalingEventRegister(buf []byte, index uint64) any {
	var req structs.ScalingEventRequest
	decode(buf, &req, structs.ScalingEventRegisterRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.ScalingEventRegisterRequestType, index, nil)
	defer txn.Abort()
	if err := store.UpsertScalingEventTxn(txn, &req); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
