package state

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// jobVersionEvents publishes a version losing its tag or leaving the store, the two ways a
// job's history shrinks without a purge; a new version, or a tag set, is told by the Job event
// of the same write. A version deleted with its whole job is left to the job's event.
//
// memdb folds the changes to one row within a transaction into one change, so an untag that
// lets the same write prune the version arrives as a single delete of a tagged row: both
// events are published for it.
func jobVersionEvents(txn *Txn, change memdb.Change) []structs.Event {
	var before, after *structs.Job
	if change.Before != nil {
		before = change.Before.(*structs.Job)
	}
	if change.After != nil {
		after = change.After.(*structs.Job)
	}
	if before == nil {
		return nil
	}
	event := func(typ string, job *structs.Job, tag *structs.JobVersionTag) structs.Event {
		return structs.Event{
			Topic: structs.TopicJob, Type: typ, Key: job.ID, Namespace: job.Namespace,
			Payload: &structs.JobVersionEvent{Job: job, RemovedTag: tag, Actor: txn.Meta.Actor},
		}
	}
	if after == nil && txn.removedJobs[jobKey{before.Namespace, before.ID}] {
		return nil
	}
	var out []structs.Event
	// A tag replaced by another name is that name's untag.
	if before.VersionTag != nil && (after == nil || after.VersionTag == nil || after.VersionTag.Name != before.VersionTag.Name) {
		if after == nil {
			// Folded untag and prune: publish the version as the untag left it. A shallow
			// copy, since payloads are read-only and a version's spec can be large.
			untagged := *before
			untagged.VersionTag = nil
			before = &untagged
		}
		removed := change.Before.(*structs.Job).VersionTag
		job := after
		if job == nil {
			job = before
		}
		out = append(out, event(structs.TypeJobVersionUntagged, job, removed))
	}
	if after == nil {
		out = append(out, event(structs.TypeJobVersionPruned, before, nil))
	}
	return out
}
