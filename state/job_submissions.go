package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

const tableJobSubmission = "job_submission"

func init() {
	registerTable(tableJobSubmission, &structs.JobSubmission{}, idIndex(versioned("JobID")))
}

// upsertJobSubmissionTxn stores the source job (just upserted) was registered from, under its
// version. A registration that did not change the spec keeps the version's first source.
func (s *StateStore) upsertJobSubmissionTxn(txn *Txn, job *structs.Job, sub *api.JobSubmission) error {
	if sub == nil {
		return nil
	}
	existing, err := txn.First(tableJobSubmission, indexID, job.Namespace, job.ID, job.Version)
	if err != nil {
		return fmt.Errorf("state: job submission lookup: %w", err)
	}
	if existing != nil {
		return nil
	}
	row := &structs.JobSubmission{
		Namespace: job.Namespace, JobID: job.ID, Version: job.Version,
		Source: sub.Source, Format: sub.Format, VariableFlags: sub.VariableFlags, Variables: sub.Variables,
		CreateIndex: txn.Index, ModifyIndex: txn.Index,
	}
	if err := txn.Insert(tableJobSubmission, row); err != nil {
		return fmt.Errorf("state: job submission insert: %w", err)
	}
	return txn.bumpIndex(tableJobSubmission)
}

// deleteJobSubmissionsTxn removes the submissions of the job's versions: all of them, or with
// only set, those versions.
func (s *StateStore) deleteJobSubmissionsTxn(txn *Txn, namespace, id string, only ...uint64) error {
	it, err := txn.Get(tableJobSubmission, indexID+"_prefix", namespace, id)
	if err != nil {
		return fmt.Errorf("state: job submission lookup: %w", err)
	}
	var doomed []*structs.JobSubmission
	for raw := it.Next(); raw != nil; raw = it.Next() {
		sub := raw.(*structs.JobSubmission)
		// The prefix also matches jobs whose ID extends this one ("web", "web2").
		if sub.JobID != id {
			continue
		}
		if len(only) > 0 && !containsVersion(only, sub.Version) {
			continue
		}
		doomed = append(doomed, sub)
	}
	return deleteRows(txn, "job submission", tableJobSubmission, doomed)
}

func containsVersion(versions []uint64, v uint64) bool {
	for _, x := range versions {
		if x == v {
			return true
		}
	}
	return false
}

// JobSubmission reads the source of one version of a job; nil when none was kept.
func (s *StateStore) JobSubmission(ws memdb.WatchSet, namespace, id string, version uint64) (*structs.JobSubmission, error) {
	txn := s.db.Txn(false)
	ch, raw, err := txn.FirstWatch(tableJobSubmission, indexID, namespace, id, version)
	if err != nil {
		return nil, fmt.Errorf("state: job submission lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.JobSubmission), nil
}
