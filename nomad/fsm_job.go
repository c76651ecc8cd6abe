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
}

func (f *FSM) applyJobRegister(buf []byte, index uint64) any {
	var req structs.JobRegisterRequest
	decode(buf, &req, structs.JobRegisterRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.JobRegisterRequestType, index, &state.TxnMeta{Actor: req.Actor})
	defer txn.Abort()

	// The check-and-set runs in the transaction so two racing registers cannot both pass it.
	if req.EnforceIndex {
		existing, err := store.JobByIDTxn(txn, req.Job.Namespace, req.Job.ID)
		if err != nil {
			return err
		}
		var current uint64
		if existing != nil {
			current = existing.JobModifyIndex
		}
		if current != req.JobModifyIndex {
			if req.JobModifyIndex == 0 {
				return structs.Conflict("Enforcing job modify index %d: job already exists", req.JobModifyIndex)
			}
			return structs.Conflict("Enforcing job modify index %d: job exists with conflicting job modify index: %d", req.JobModifyIndex, current)
		}
	}
	if err := store.UpsertJobTxn(txn, req.Job); err != nil {
		return err
	}
	if req.Eval != nil {
		req.Eval.JobModifyIndex = req.Job.JobModifyIndex
		if err := store.UpsertEvalsTxn(txn, []*structs.Evaluation{req.Eval}); err != nil {
			return err
		}
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyJobDeregister(buf []byte, index uint64) any {
	var req structs.JobDeregisterRequest
	decode(buf, &req, structs.JobDeregisterRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.JobDeregisterRequestType, index, &state.TxnMeta{Purge: req.Purge, Actor: req.Actor})
	defer txn.Abort()

	job, err := store.JobByIDTxn(txn, req.Namespace, req.JobID)
	if err != nil {
		return err
	}
	if job == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	// In the same entry as the stop or purge: once it is applied, no server (after a restart
	// or a leader change) goes on with the job's earlier evaluations. The deregister's own
	// evaluation, added below, stops what runs.
	reason := "canceled: job stopped"
	if req.Purge {
		reason = "canceled: job purged"
	}
	if err := store.CancelJobEvalsTxn(txn, req.Namespace, req.JobID, reason, req.StopTime); err != nil {
		return err
	}
	if req.Purge {
		if err := store.DeleteJobTxn(txn, req.Namespace, req.JobID); err != nil {
			return err
		}
		if err := store.InsertPurgeRecordTxn(txn, purgeRecordFor(job, req.PurgeRecordID, req.PurgeTime, structs.PurgeReasonPurge, req.Actor)); err != nil {
			return err
		}
	} else {
		stopped := job.Copy()
		stopped.Stop = true
		if !job.Stop {
			stopped.SubmitTime = req.StopTime
		}
		if err := store.UpsertJobTxn(txn, stopped); err != nil {
			return err
		}
	}
	if req.Eval != nil {
		req.Eval.JobModifyIndex = index
		if err := store.UpsertEvalsTxn(txn, []*structs.Evaluation{req.Eval}); err != nil {
			return err
		}
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyJobBatchDeregister(buf []byte, index uint64) any {
	var req structs.JobBatchDeregisterRequest
	decode(buf, &req, structs.JobBatchDeregisterRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.JobBatchDeregisterRequestType, index, &state.TxnMeta{Purge: true, Actor: req.Actor, ForcedBy: req.ForcedBy})
	defer txn.Abort()
	for _, item := range req.Jobs {
		job, err := store.JobByIDTxn(txn, item.Namespace, item.JobID)
		if err != nil {
			return err
		}
		if job == nil {
			// Already gone (purged between the GC's scan and this apply): nothing to record.
			continue
		}
		if err := store.CancelJobEvalsTxn(txn, item.Namespace, item.JobID, "canceled: job purged by garbage collection", req.PurgeTime); err != nil {
			return err
		}
		if err := store.DeleteJobTxn(txn, item.Namespace, item.JobID); err != nil {
			return err
		}
		record := purgeRecordFor(job, item.PurgeRecordID, req.PurgeTime, structs.PurgeReasonGC, req.Actor)
		record.ForcedBy = req.ForcedBy
		if err := store.InsertPurgeRecordTxn(txn, record); err != nil {
			return err
		}
	}
	txn.Commit()
	return nil
}

func purgeRecordFor(job *structs.Job, id string, purgeTime int64, reason string, actor *structs.Actor) *structs.PurgeRecord {
	return &structs.PurgeRecord{
		ID:         id,
		Namespace:  job.Namespace,
		JobID:      job.ID,
		JobVersion: job.Version,
		JobType:    job.Type,
		Reason:     reason,
		Actor:      actor,
		PurgeTime:  purgeTime,
		Job:        job,
	}
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
