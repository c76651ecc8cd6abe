package state

import (
	"fmt"
	"reflect"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// UpsertJob registers or updates a job in its own transaction (tests and tools; the FSM uses
// UpsertJobTxn inside the entry's transaction).
func (s *StateStore) UpsertJob(msgType structs.MessageType, index uint64, job *structs.Job) error {
	txn := s.WriteTxn(msgType, index, nil)
	defer txn.Abort()
	if err := s.UpsertJobTxn(txn, job); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// UpsertJobTxn stores job as the current version. A job whose spec differs from the stored one
// becomes a new version; an identical one keeps the stored version, so re-submitting the same
// file is a no-op for history.
func (s *StateStore) UpsertJobTxn(txn *Txn, job *structs.Job) error {
	existing, err := txn.First(tableJobs, indexID, job.Namespace, job.ID)
	if err != nil {
		return fmt.Errorf("state: job lookup: %w", err)
	}
	if _, err := s.namespaceTxn(txn, job.Namespace); err != nil {
		return err
	}
	newVersion := true
	if existing != nil {
		prev := existing.(*structs.Job)
		job.CreateIndex = prev.CreateIndex
		job.ModifyIndex = txn.Index
		if SpecChanged(prev, job) {
			job.Version = prev.Version + 1
			job.JobModifyIndex = txn.Index
			job.VersionTag = nil
			job.Stable = false
		} else {
			newVersion = false
			job.Version = prev.Version
			job.JobModifyIndex = prev.JobModifyIndex
			job.VersionTag = prev.VersionTag
			job.Stable = prev.Stable
			job.SubmitTime = prev.SubmitTime
			// The version is the one its first registrant put there.
			job.SubmittedBy = prev.SubmittedBy
		}
	} else {
		job.CreateIndex = txn.Index
		job.ModifyIndex = txn.Index
		job.JobModifyIndex = txn.Index
		job.Version = 0
	}
	if job.Status, job.StatusDescription, err = s.jobStatusTxn(txn, job); err != nil {
		return err
	}

	if err := txn.Insert(tableJobs, job); err != nil {
		return fmt.Errorf("state: job insert: %w", err)
	}
	if err := txn.bumpIndex(tableJobs); err != nil {
		return err
	}
	if err := s.upsertJobSummaryTxn(txn, job); err != nil {
		return err
	}
	if err := s.refreshChildrenSummaryTxn(txn, job.Namespace, job.ParentID); err != nil {
		return err
	}
	if err := s.upsertJobScalingPoliciesTxn(txn, job); err != nil {
		return err
	}
	if newVersion {
		return s.upsertJobVersionTxn(txn, job)
	}
	// The version row mirrors the job row's status and index.
	return s.replaceJobVersionTxn(txn, job)
}

// serverManagedFields are set by the server, not by the submitter, so they never make a spec
// differ.
var serverManagedFields = []string{
	"Status", "StatusDescription", "Stable", "Version", "SubmitTime", "CreateIndex",
	"ModifyIndex", "JobModifyIndex", "VersionTag", "NomadTokenID", "SubmittedBy",
}

// SpecChanged reports whether b's user-supplied spec differs from a's.
func SpecChanged(a, b *structs.Job) bool {
	ca, cb := a.Copy(), b.Copy()
	for _, name := range serverManagedFields {
		for _, c := range []*structs.Job{ca, cb} {
			f := reflect.ValueOf(c).Elem().FieldByName(name)
			f.Set(reflect.Zero(f.Type()))
		}
	}
	return !reflect.DeepEqual(ca, cb)
}

// jobStatusTxn derives a job's status from its allocations and evaluations, as upstream does,
// with one difference: a stopped job is dead as soon as nothing of it runs, whatever its
// evaluations, so a stop reads as dead without waiting for the scheduler. An allocation
// counts as running until its client has finished with it (a stopped allocation whose task
// is still being killed keeps the job running).
func (s *StateStore) jobStatusTxn(txn *Txn, job *structs.Job) (string, string, error) {
	allocs, err := allocsByJobTxn(txn.Txn, nil, job.Namespace, job.ID)
	if err != nil {
		return "", "", err
	}
	for _, alloc := range allocs {
		if !alloc.ClientTerminalStatus() {
			return structs.JobStatusRunning, "", nil
		}
	}
	if job.Stop {
		return structs.JobStatusDead, "", nil
	}
	if job.Type == structs.JobTypeSystem || job.IsPeriodic() || job.IsParameterized() {
		return structs.JobStatusRunning, "", nil
	}
	evals, err := evalsByJobTxn(txn.Txn, job.Namespace, job.ID)
	if err != nil {
		return "", "", err
	}
	for _, eval := range evals {
		if !eval.TerminalStatus() {
			return structs.JobStatusPending, "", nil
		}
	}
	if len(allocs) > 0 || len(evals) > 0 {
		return structs.JobStatusDead, "", nil
	}
	// Everything it ran was collected (allocations, then their evaluations): it ran, so it
	// is dead, not pending.
	if collected, err := jobCollectedAllocsTxn(txn, job.Namespace, job.ID); err != nil {
		return "", "", err
	} else if collected != nil {
		return structs.JobStatusDead, "", nil
	}
	return structs.JobStatusPending, "", nil
}

// setJobStatusesTxn derives the status of each job again; see setJobStatusTxn.
func (s *StateStore) setJobStatusesTxn(txn *Txn, jobs jobSet) error {
	ids := make([]structs.NamespacedID, 0, len(jobs))
	for id := range jobs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		if err := s.setJobStatusTxn(txn, id.Namespace, id.ID); err != nil {
			return err
		}
	}
	return nil
}

// setJobStatusTxn derives a job's status again after its allocations or evaluations changed
// and, only when it differs, writes the job row and its version row with the new status. A
// job that no longer exists is left alone.
func (s *StateStore) setJobStatusTxn(txn *Txn, namespace, id string) error {
	job, err := jobByIDTxn(txn.Txn, nil, namespace, id)
	if err != nil || job == nil {
		return err
	}
	status, desc, err := s.jobStatusTxn(txn, job)
	if err != nil {
		return err
	}
	if status == job.Status && desc == job.StatusDescription {
		return nil
	}
	updated := job.Copy()
	updated.Status, updated.StatusDescription = status, desc
	updated.ModifyIndex = txn.Index
	if err := txn.Insert(tableJobs, updated); err != nil {
		return fmt.Errorf("state: job insert: %w", err)
	}
	if err := txn.bumpIndex(tableJobs); err != nil {
		return err
	}
	if err := s.refreshChildrenSummaryTxn(txn, namespace, job.ParentID); err != nil {
		return err
	}
	// The current version's row mirrors the job row, as UpsertJobTxn keeps it.
	if v, err := txn.First(tableJobVersion, indexID, namespace, id, job.Version); err != nil {
		return fmt.Errorf("state: job version lookup: %w", err)
	} else if v == nil {
		return nil
	}
	return s.replaceJobVersionTxn(txn, updated)
}

func (s *StateStore) upsertJobVersionTxn(txn *Txn, job *structs.Job) error {
	if err := txn.Insert(tableJobVersion, job); err != nil {
		return fmt.Errorf("state: job version insert: %w", err)
	}
	if err := txn.bumpIndex(tableJobVersion); err != nil {
		return err
	}
	return s.pruneJobVersionsTxn(txn, job.Namespace, job.ID)
}

func (s *StateStore) replaceJobVersionTxn(txn *Txn, job *structs.Job) error {
	if err := txn.Insert(tableJobVersion, job); err != nil {
		return fmt.Errorf("state: job version insert: %w", err)
	}
	return txn.bumpIndex(tableJobVersion)
}

// pruneJobVersionsTxn keeps the newest JobTrackedVersions untagged versions. Tagged versions
// are kept whatever their age and do not count against the limit.
func (s *StateStore) pruneJobVersionsTxn(txn *Txn, namespace, id string) error {
	versions, err := jobVersionsTxn(txn.Txn, nil, namespace, id)
	if err != nil {
		return err
	}
	kept := 0
	for _, v := range versions { // newest first
		if v.VersionTag != nil {
			continue
		}
		kept++
		if kept <= s.config.JobTrackedVersions {
			continue
		}
		if err := txn.Delete(tableJobVersion, v); err != nil {
			return fmt.Errorf("state: pruning job version: %w", err)
		}
		if err := s.deleteJobSubmissionsTxn(txn, namespace, id, v.Version); err != nil {
			return err
		}
	}
	return nil
}

// DeleteJobTxn removes a job with all its versions, its summary and its allocations.
func (s *StateStore) DeleteJobTxn(txn *Txn, namespace, id string) error {
	existing, err := txn.First(tableJobs, indexID, namespace, id)
	if err != nil {
		return fmt.Errorf("state: job lookup: %w", err)
	}
	if existing == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	if err := s.removeJobProtectionTxn(txn, namespace, id); err != nil {
		return err
	}
	if err := txn.Delete(tableJobs, existing); err != nil {
		return fmt.Errorf("state: job delete: %w", err)
	}
	if txn.removedJobs == nil {
		txn.removedJobs = map[jobKey]bool{}
	}
	txn.removedJobs[jobKey{namespace, id}] = true
	// Not DeleteAll on the prefix index: it would also match jobs whose ID extends this one
	// ("web" and "web2"); jobVersionsTxn keeps only exact matches.
	versions, err := jobVersionsTxn(txn.Txn, nil, namespace, id)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if err := txn.Delete(tableJobVersion, v); err != nil {
			return fmt.Errorf("state: job versions delete: %w", err)
		}
	}
	if _, err := txn.DeleteAll(tableJobSummary, indexID, namespace, id); err != nil {
		return fmt.Errorf("state: job summary delete: %w", err)
	}
	if err := deleteJobCollectedAllocsTxn(txn, namespace, id); err != nil {
		return err
	}
	if err := s.deleteJobAllocsTxn(txn, namespace, id); err != nil {
		return err
	}
	if err := s.deleteJobDeploymentsTxn(txn, namespace, id); err != nil {
		return err
	}
	if err := s.deleteJobSubmissionsTxn(txn, namespace, id); err != nil {
		return err
	}
	if err := s.deleteScalingEventsTxn(txn, namespace, id); err != nil {
		return err
	}
	if err := s.deleteJobScalingPoliciesTxn(txn, namespace, id); err != nil {
		return err
	}
	if err := s.deletePeriodicLaunchTxn(txn, namespace, id); err != nil {
		return err
	}
	if err := s.refreshChildrenSummaryTxn(txn, namespace, existing.(*structs.Job).ParentID); err != nil {
		return err
	}
	for _, table := range []string{tableJobs, tableJobVersion, tableJobSummary} {
		if err := txn.bumpIndex(table); err != nil {
			return err
		}
	}
	return nil
}

// JobByID reads the current version of a job; nil when it does not exist.
func (s *StateStore) JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	return jobByIDTxn(s.db.Txn(false), ws, namespace, id)
}

// JobByIDTxn reads a job inside a write transaction.
func (s *StateStore) JobByIDTxn(txn *Txn, namespace, id string) (*structs.Job, error) {
	return jobByIDTxn(txn.Txn, nil, namespace, id)
}

// existingJobTxn reads a job a write acts on; a missing job is a 404.
func existingJobTxn(txn *Txn, namespace, id string) (*structs.Job, error) {
	job, err := jobByIDTxn(txn.Txn, nil, namespace, id)
	if err == nil && job == nil {
		err = structs.NotFound(structs.ErrJobNotFound)
	}
	return job, err
}

func jobByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	return first[*structs.Job](txn, ws, "job lookup", tableJobs, indexID, namespace, id)
}

// Jobs lists jobs whose ID starts with prefix in namespace ("*" for every namespace), sorted by
// namespace then ID.
func (s *StateStore) Jobs(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Job, error) {
	return listInNamespace(s.db.Txn(false), ws, "job list", tableJobs, namespace, prefix, func(j *structs.Job) string { return j.ID })
}

// JobVersionsByID lists a job's stored versions, newest first.
func (s *StateStore) JobVersionsByID(ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error) {
	return jobVersionsTxn(s.db.Txn(false), ws, namespace, id)
}

func jobVersionsTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error) {
	iter, err := txn.Get(tableJobVersion, indexID+"_prefix", namespace, id)
	if err != nil {
		return nil, fmt.Errorf("state: job versions: %w", err)
	}
	ws.Add(iter.WatchCh())
	var out []*structs.Job
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		v := raw.(*structs.Job)
		// The prefix index also matches jobs whose ID extends this one ("web" and "web2").
		if v.ID != id {
			continue
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version > out[j].Version })
	return out, nil
}

// JobByIDAndVersion reads one stored version; nil when it is not kept.
func (s *StateStore) JobByIDAndVersion(ws memdb.WatchSet, namespace, id string, version uint64) (*structs.Job, error) {
	return first[*structs.Job](s.db.Txn(false), ws, "job version lookup", tableJobVersion, indexID, namespace, id, version)
}

// JobSummaryByID reads a job's allocation summary.
func (s *StateStore) JobSummaryByID(ws memdb.WatchSet, namespace, id string) (*structs.JobSummary, error) {
	return first[*structs.JobSummary](s.db.Txn(false), ws, "job summary lookup", tableJobSummary, indexID, namespace, id)
}

// upsertJobSummaryTxn keeps one summary entry per group of the current version.
func (s *StateStore) upsertJobSummaryTxn(txn *Txn, job *structs.Job) error {
	raw, err := txn.First(tableJobSummary, indexID, job.Namespace, job.ID)
	if err != nil {
		return fmt.Errorf("state: job summary lookup: %w", err)
	}
	summary := &structs.JobSummary{
		JobID:       job.ID,
		Namespace:   job.Namespace,
		Summary:     map[string]structs.TaskGroupSummary{},
		CreateIndex: txn.Index,
		ModifyIndex: txn.Index,
	}
	if job.IsPeriodic() || job.IsParameterized() {
		summary.Children = &structs.JobChildrenSummary{}
	}
	if raw != nil {
		prev := raw.(*structs.JobSummary)
		summary.CreateIndex = prev.CreateIndex
		if prev.Children != nil {
			c := *prev.Children
			summary.Children = &c
		}
		for name, tgs := range prev.Summary {
			if job.LookupTaskGroup(name) != nil {
				summary.Summary[name] = tgs
			}
		}
	}
	for _, tg := range job.TaskGroups {
		if tg.Name == nil {
			continue
		}
		if _, ok := summary.Summary[*tg.Name]; !ok {
			summary.Summary[*tg.Name] = structs.TaskGroupSummary{}
		}
	}
	if raw != nil && reflect.DeepEqual(raw.(*structs.JobSummary).Summary, summary.Summary) {
		return nil
	}
	if err := txn.Insert(tableJobSummary, summary); err != nil {
		return fmt.Errorf("state: job summary insert: %w", err)
	}
	return txn.bumpIndex(tableJobSummary)
}

// TagJobVersionTxn sets (tag non-nil) or removes the tag name on a version of a job.
func (s *StateStore) TagJobVersionTxn(txn *Txn, namespace, id string, version *uint64, name string, tag *structs.JobVersionTag) error {
	job, err := existingJobTxn(txn, namespace, id)
	if err != nil {
		return err
	}
	versions, err := jobVersionsTxn(txn.Txn, nil, namespace, id)
	if err != nil {
		return err
	}
	if tag != nil && version == nil && len(versions) > 0 {
		// No version named: the tag goes on the newest.
		latest := versions[0].Version
		version = &latest
	}
	var target *structs.Job
	for _, v := range versions {
		if tag == nil && v.VersionTag != nil && v.VersionTag.Name == name {
			target = v
		}
		if tag != nil && v.VersionTag != nil && v.VersionTag.Name == name && (version == nil || v.Version != *version) {
			return structs.BadRequest("tag %q already exists on a different version of job %q", name, id)
		}
		if tag != nil && version != nil && v.Version == *version {
			target = v
		}
	}
	if target == nil {
		if tag == nil {
			return structs.NewErrCode(404, "tag %q not found on job %q", name, id)
		}
		return structs.NewErrCode(404, "job %q version %d not found", id, *version)
	}
	updated := target.Copy()
	updated.VersionTag = tag
	if err := txn.Insert(tableJobVersion, updated); err != nil {
		return fmt.Errorf("state: job version insert: %w", err)
	}
	if err := txn.bumpIndex(tableJobVersion); err != nil {
		return err
	}
	if target.Version == job.Version {
		current := job.Copy()
		current.VersionTag = tag
		current.ModifyIndex = txn.Index
		if err := txn.Insert(tableJobs, current); err != nil {
			return fmt.Errorf("state: job insert: %w", err)
		}
		if err := txn.bumpIndex(tableJobs); err != nil {
			return err
		}
	}
	// A tag removed from an old version may make it prunable again.
	return s.pruneJobVersionsTxn(txn, namespace, id)
}
