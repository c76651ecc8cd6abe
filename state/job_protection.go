package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// tableJobProtection holds jobs' deletion protection, apart from the job rows so that a
// registration (which replaces the job row with the submitted spec) cannot drop it.
const tableJobProtection = "job_protection"

func init() {
	registerTable(tableJobProtection, &structs.JobProtection{}, idIndex(namespaced(field("JobID"))))
}

// ApplyJobProtection sets or clears a job's protection at index. The job must exist: a
// protection of a job that is not there would protect whatever is registered under its ID
// later, which nobody asked for.
func (s *StateStore) ApplyJobProtection(index uint64, req *structs.JobProtectionRequest) error {
	txn := s.WriteTxn(structs.JobProtectionRequestType, index, &TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if _, err := existingJobTxn(txn, req.Namespace, req.JobID); err != nil {
		return err
	}
	p := &structs.JobProtection{
		Namespace: req.Namespace, JobID: req.JobID, Protected: req.Protected, Reason: req.Reason,
		Actor: req.Actor, ModifyTime: req.ModifyTime, CreateIndex: index, ModifyIndex: index,
	}
	if !p.Protected {
		// A cleared protection keeps who cleared it and when, not the old reason.
		p.Reason = ""
	}
	if prev, err := jobProtectionTxn(txn.Txn, nil, req.Namespace, req.JobID); err != nil {
		return err
	} else if prev != nil {
		p.CreateIndex = prev.CreateIndex
	}
	if err := txn.Insert(tableJobProtection, p); err != nil {
		return fmt.Errorf("state: job protection insert: %w", err)
	}
	if err := txn.bumpIndex(tableJobProtection); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func jobProtectionTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) (*structs.JobProtection, error) {
	return first[*structs.JobProtection](txn, ws, "job protection lookup", tableJobProtection, indexID, namespace, jobID)
}

// JobProtectionByID reads a job's protection; nil when it was never set.
func (s *StateStore) JobProtectionByID(ws memdb.WatchSet, namespace, jobID string) (*structs.JobProtection, error) {
	return jobProtectionTxn(s.db.Txn(false), ws, namespace, jobID)
}

// JobProtectionByIDTxn reads a job's protection inside a write.
func (s *StateStore) JobProtectionByIDTxn(txn *Txn, namespace, jobID string) (*structs.JobProtection, error) {
	return jobProtectionTxn(txn.Txn, nil, namespace, jobID)
}

// JobProtected reports the protection of a job when it is protected, nil otherwise.
func (s *StateStore) JobProtected(namespace, jobID string) (*structs.JobProtection, error) {
	p, err := s.JobProtectionByID(nil, namespace, jobID)
	if err != nil || p == nil || !p.Protected {
		return nil, err
	}
	return p, nil
}

// removeJobProtectionTxn is DeleteJobTxn's guard and cleanup: a protected job is refused with
// a 409 naming the reason, so no write of any kind (purge, GC, whatever comes later) removes
// it; an unprotected job's cleared protection goes with it.
func (s *StateStore) removeJobProtectionTxn(txn *Txn, namespace, jobID string) error {
	p, err := jobProtectionTxn(txn.Txn, nil, namespace, jobID)
	if err != nil || p == nil {
		return err
	}
	if p.Protected {
		return p.PurgeRefusal()
	}
	if err := txn.Delete(tableJobProtection, p); err != nil {
		return fmt.Errorf("state: job protection delete: %w", err)
	}
	return txn.bumpIndex(tableJobProtection)
}

// jobProtectionEvents publishes a protection change on the Job topic with who made it. The
// removal of a cleared protection with its job is told by the job's own event.
func jobProtectionEvents(txn *Txn, change memdb.Change) []structs.Event {
	if change.Deleted() {
		return nil
	}
	p := change.After.(*structs.JobProtection)
	return []structs.Event{{
		Topic: structs.TopicJob, Type: structs.TypeJobProtectionChanged, Key: p.JobID, Namespace: p.Namespace,
		Payload: &structs.JobProtectionEvent{Protection: p, Actor: txn.Meta.Actor},
	}}
}
