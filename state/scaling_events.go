package state

import (
	"fmt"
	"maps"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

const tableScalingEvents = "scaling_event"

func init() {
	registerTable(tableScalingEvents, &structs.JobScalingEvents{}, idIndex(namespaced(field("JobID"))))
}

// UpsertScalingEventTxn records a scaling event of a group of an existing job, newest first,
// keeping structs.JobTrackedScalingEvents per group.
func (s *StateStore) UpsertScalingEventTxn(txn *Txn, req *structs.ScalingEventRequest) error {
	if req == nil || req.Event == nil {
		return nil
	}
	job, err := txn.First(tableJobs, indexID, req.Namespace, req.JobID)
	if err != nil {
		return fmt.Errorf("state: job lookup: %w", err)
	}
	if job == nil {
		return structs.NotFound(structs.ErrJobNotFound)
	}
	row := &structs.JobScalingEvents{Namespace: req.Namespace, JobID: req.JobID, ScalingEvents: map[string][]*api.ScalingEvent{}}
	raw, err := txn.First(tableScalingEvents, indexID, req.Namespace, req.JobID)
	if err != nil {
		return fmt.Errorf("state: scaling events lookup: %w", err)
	}
	if raw != nil {
		row.ScalingEvents = maps.Clone(raw.(*structs.JobScalingEvents).ScalingEvents)
	}
	event := *req.Event
	event.CreateIndex = txn.Index
	events := append([]*api.ScalingEvent{&event}, row.ScalingEvents[req.TaskGroup]...)
	if len(events) > structs.JobTrackedScalingEvents {
		events = events[:structs.JobTrackedScalingEvents]
	}
	row.ScalingEvents[req.TaskGroup] = events
	row.ModifyIndex = txn.Index
	if err := txn.Insert(tableScalingEvents, row); err != nil {
		return fmt.Errorf("state: scaling events insert: %w", err)
	}
	return txn.bumpIndex(tableScalingEvents)
}

// deleteScalingEventsTxn removes a job's scaling events (the job is purged).
func (s *StateStore) deleteScalingEventsTxn(txn *Txn, namespace, id string) error {
	return deleteAll(txn, "scaling events", tableScalingEvents, indexID, namespace, id)
}

// ScalingEventsByJob reads a job's scaling events; nil when it has none.
func (s *StateStore) ScalingEventsByJob(ws memdb.WatchSet, namespace, id string) (*structs.JobScalingEvents, error) {
	return first[*structs.JobScalingEvents](s.db.Txn(false), ws, "scaling events lookup", tableScalingEvents, indexID, namespace, id)
}
