package state

import (
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// The job writes of the Raft log, each one whole transaction: the FSM decodes an entry and
// calls one of these, and the state tests call the same functions, so what a test checks is
// what a cluster commits. Each takes its times and IDs from the request (the leader fixed
// them); none reads a clock.

// ApplyJobRegister registers a job (with its evaluation) at index; with EnforceIndex, only if
// the job's modify index is still the one the caller saw.
func (s *StateStore) ApplyJobRegister(index uint64, req *structs.JobRegisterRequest) error {
	txn := s.WriteTxn(structs.JobRegisterRequestType, index, &TxnMeta{Actor: req.Actor})
	defer txn.Abort()

	// The check-and-set runs in the transaction so two racing registers cannot both pass it.
	if req.EnforceIndex {
		existing, err := s.JobByIDTxn(txn, req.Job.Namespace, req.Job.ID)
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
	if err := s.UpsertPeriodicLaunchTxn(txn, req.PeriodicLaunch); err != nil {
		return err
	}
	if err := s.checkDispatchTokenTxn(txn, req.Job); err != nil {
		return err
	}
	if err := s.UpsertJobTxn(txn, req.Job); err != nil {
		return err
	}
	if err := s.upsertJobSubmissionTxn(txn, req.Job, req.Submission); err != nil {
		return err
	}
	if req.Eval != nil {
		req.Eval.JobModifyIndex = req.Job.JobModifyIndex
		if err := s.UpsertEvalsTxn(txn, []*structs.Evaluation{req.Eval}); err != nil {
			return err
		}
	}
	if req.Scaling != nil && req.Scaling.Event != nil {
		scaling := *req.Scaling
		event := *scaling.Event
		if req.Eval != nil {
			evalID := req.Eval.ID
			event.EvalID = &evalID
		}
		scaling.Event = &event
		if err := s.UpsertScalingEventTxn(txn, &scaling); err != nil {
			return err
		}
	}
	txn.Commit()
	return nil
}

// ApplyJobDeregister stops a job, or purges it (the row goes, a purge record stays) when
// req.Purge. The request's Purge flag is the transaction's, so the JobDeregistered event says
// what was asked, whatever else the transaction removes.
func (s *StateStore) ApplyJobDeregister(index uint64, req *structs.JobDeregisterRequest) error {
	txn := s.WriteTxn(structs.JobDeregisterRequestType, index, &TxnMeta{Purge: req.Purge, Actor: req.Actor})
	defer txn.Abort()

	job, err := existingJobTxn(txn, req.Namespace, req.JobID)
	if err != nil {
		return err
	}
	// In the same entry as the stop or purge: once it is applied, no server (after a restart
	// or a leader change) goes on with the job's earlier evaluations. The deregister's own
	// evaluation, added below, stops what runs.
	reason := "canceled: job stopped"
	if req.Purge {
		reason = "canceled: job purged"
	}
	if err := s.CancelJobEvalsTxn(txn, req.Namespace, req.JobID, reason, req.StopTime); err != nil {
		return err
	}
	if req.Purge {
		allocs, err := allocsByJobTxn(txn.Txn, nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if err := s.DeleteJobTxn(txn, req.Namespace, req.JobID); err != nil {
			return err
		}
		if err := s.InsertPurgeRecordTxn(txn, PurgeRecordFor(job, allocs, req.PurgeRecordID, req.PurgeTime, structs.PurgeReasonPurge, req.Actor)); err != nil {
			return err
		}
	} else {
		stopped := job.Copy()
		stopped.Stop = true
		if !job.Stop {
			stopped.SubmitTime = req.StopTime
		}
		if err := s.UpsertJobTxn(txn, stopped); err != nil {
			return err
		}
		if req.NoShutdownDelay {
			// job stop -no-shutdown-delay: the allocations the deregister's evaluation
			// stops carry it to their clients, as an alloc stop's does.
			allocs, err := allocsByJobTxn(txn.Txn, nil, req.Namespace, req.JobID)
			if err != nil {
				return err
			}
			skip := true
			transitions := map[string]*api.DesiredTransition{}
			for _, a := range allocs {
				if !a.TerminalStatus() {
					transitions[a.ID] = &api.DesiredTransition{NoShutdownDelay: &skip}
				}
			}
			if err := s.UpdateAllocsDesiredTransitionTxn(txn, transitions, req.StopTime); err != nil {
				return err
			}
		}
	}
	if req.Eval != nil {
		req.Eval.JobModifyIndex = index
		if err := s.UpsertEvalsTxn(txn, []*structs.Evaluation{req.Eval}); err != nil {
			return err
		}
	}
	txn.Commit()
	return nil
}

// ApplyJobBatchDeregister removes the jobs the GC chose, each with a purge record; jobs
// already gone are skipped.
func (s *StateStore) ApplyJobBatchDeregister(index uint64, req *structs.JobBatchDeregisterRequest) error {
	txn := s.WriteTxn(structs.JobBatchDeregisterRequestType, index, &TxnMeta{Purge: true, Actor: req.Actor, ForcedBy: req.ForcedBy})
	defer txn.Abort()
	for _, item := range req.Jobs {
		job, err := s.JobByIDTxn(txn, item.Namespace, item.JobID)
		if err != nil {
			return err
		}
		if job == nil {
			// Already gone (purged between the GC's scan and this apply): nothing to record.
			continue
		}
		// Protected between the GC's scan and this apply: kept, as the GC keeps any
		// protected job.
		if p, err := s.JobProtectionByIDTxn(txn, item.Namespace, item.JobID); err != nil {
			return err
		} else if p != nil && p.Protected {
			continue
		}
		if err := s.CancelJobEvalsTxn(txn, item.Namespace, item.JobID, "canceled: job purged by garbage collection", req.PurgeTime); err != nil {
			return err
		}
		allocs, err := allocsByJobTxn(txn.Txn, nil, item.Namespace, item.JobID)
		if err != nil {
			return err
		}
		if err := s.DeleteJobTxn(txn, item.Namespace, item.JobID); err != nil {
			return err
		}
		record := PurgeRecordFor(job, allocs, item.PurgeRecordID, req.PurgeTime, structs.PurgeReasonGC, req.Actor)
		record.ForcedBy = req.ForcedBy
		if err := s.InsertPurgeRecordTxn(txn, record); err != nil {
			return err
		}
	}
	txn.Commit()
	return nil
}

// PurgeRecordFor is the purge-history record of removing job, whose allocations were allocs.
func PurgeRecordFor(job *structs.Job, allocs []*structs.Allocation, id string, purgeTime int64, reason string, actor *structs.Actor) *structs.PurgeRecord {
	var purged []*structs.PurgedAllocation
	for _, a := range allocs {
		purged = append(purged, structs.PurgedAllocationFrom(a))
	}
	return &structs.PurgeRecord{
		Allocations: purged,
		ID:          id,
		Namespace:   job.Namespace,
		JobID:       job.ID,
		JobVersion:  job.Version,
		JobType:     job.Type,
		Reason:      reason,
		Actor:       actor,
		PurgeTime:   purgeTime,
		Job:         job,
	}
}
