package state

import (
	"fmt"
	"maps"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Node lifecycle writes: drain, eligibility and removal. Times are what the leader fixed in
// the request (unix nanoseconds); nothing here reads the clock.

// UpdateNodeDrainTxn sets or clears a node's drain strategy. A draining node is ineligible;
// clearing the drain leaves it ineligible unless markEligible. LastDrain records the drain:
// started (or updated: StartedAt is kept) by actor with meta, or cancelled.
func (s *StateStore) UpdateNodeDrainTxn(txn *Txn, nodeID string, strategy *api.DrainStrategy, markEligible bool,
	meta map[string]string, actor *structs.Actor, updatedAt int64) error {
	existing, err := nodeByIDTxn(txn.Txn, nil, nodeID)
	if err != nil {
		return err
	}
	if existing == nil {
		return structs.NotFound(structs.ErrNodeNotFound)
	}
	at := time.Unix(0, updatedAt).UTC()
	node := existing.Copy()
	if strategy != nil {
		ds := *strategy
		node.DrainStrategy = &ds
		node.Drain = true
		node.SchedulingEligibility = structs.NodeSchedulingIneligible
		last := &api.DrainMetadata{StartedAt: at, UpdatedAt: at, Status: api.DrainStatusDraining, Meta: maps.Clone(meta)}
		if existing.DrainStrategy != nil && existing.LastDrain != nil {
			last.StartedAt = existing.LastDrain.StartedAt
		}
		if actor != nil {
			last.AccessorID = actor.AccessorID
		}
		node.LastDrain = last
		addNodeEvent(txn, node, &api.NodeEvent{Subsystem: structs.NodeEventSubsystemDrain, Message: structs.NodeEventDrainSet, Timestamp: at})
	} else {
		if existing.DrainStrategy != nil {
			addNodeEvent(txn, node, &api.NodeEvent{Subsystem: structs.NodeEventSubsystemDrain, Message: structs.NodeEventDrainDisabled, Timestamp: at})
		}
		if existing.DrainStrategy != nil && existing.LastDrain != nil {
			last := *existing.LastDrain
			last.Status, last.UpdatedAt = api.DrainStatusCanceled, at
			node.LastDrain = &last
		}
		node.DrainStrategy, node.Drain = nil, false
		if markEligible {
			node.SchedulingEligibility = structs.NodeSchedulingEligible
		}
	}
	return s.putNodeTxn(txn, node)
}

// CompleteNodeDrainsTxn ends the drains the drainer found complete: the strategy goes, the
// node stays ineligible, and LastDrain says complete. A node whose strategy is not the one
// the drainer saw (updated or cancelled since) or that is gone is skipped.
func (s *StateStore) CompleteNodeDrainsTxn(txn *Txn, seen map[string]*api.DrainStrategy, updatedAt int64) error {
	at := time.Unix(0, updatedAt).UTC()
	for id, strategy := range seen {
		existing, err := nodeByIDTxn(txn.Txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil || existing.DrainStrategy == nil || !existing.DrainStrategy.Equal(strategy) {
			continue
		}
		node := existing.Copy()
		node.DrainStrategy, node.Drain = nil, false
		if existing.LastDrain != nil {
			last := *existing.LastDrain
			last.Status, last.UpdatedAt = api.DrainStatusComplete, at
			node.LastDrain = &last
		}
		addNodeEvent(txn, node, &api.NodeEvent{Subsystem: structs.NodeEventSubsystemDrain, Message: structs.NodeEventDrainComplete, Timestamp: at})
		if err := s.putNodeTxn(txn, node); err != nil {
			return err
		}
	}
	return nil
}

// UpdateNodeEligibilityTxn sets a node's scheduling eligibility. A draining node stays
// ineligible until its drain ends.
func (s *StateStore) UpdateNodeEligibilityTxn(txn *Txn, nodeID, eligibility string, updatedAt int64) error {
	existing, err := nodeByIDTxn(txn.Txn, nil, nodeID)
	if err != nil {
		return err
	}
	if existing == nil {
		return structs.NotFound(structs.ErrNodeNotFound)
	}
	if existing.DrainStrategy != nil && eligibility == structs.NodeSchedulingEligible {
		return structs.BadRequest("can not set node's scheduling eligibility to eligible while it is draining")
	}
	node := existing.Copy()
	node.SchedulingEligibility = eligibility
	msg := structs.NodeEventEligible
	if eligibility == structs.NodeSchedulingIneligible {
		msg = structs.NodeEventIneligible
	}
	addNodeEvent(txn, node, &api.NodeEvent{Subsystem: structs.NodeEventSubsystemCluster, Message: msg, Timestamp: time.Unix(0, updatedAt).UTC()})
	return s.putNodeTxn(txn, node)
}

// DeleteNodesTxn removes nodes. What their clients had not finished becomes lost first, as
// for a node that went down, so the jobs' summaries count it and their evaluations replace
// it. Unknown IDs are skipped: a GC may race a purge.
func (s *StateStore) DeleteNodesTxn(txn *Txn, nodeIDs []string, updatedAt int64) error {
	touched := jobSet{}
	deleted := false
	for _, id := range nodeIDs {
		existing, err := nodeByIDTxn(txn.Txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil {
			continue
		}
		lost, err := s.markNodeAllocsLostTxn(txn, id, updatedAt, false)
		if err != nil {
			return err
		}
		for j := range lost {
			touched[j] = true
		}
		// Finished allocations keep no services either: none may outlive its node.
		if err := s.deleteNodeServiceRegistrationsTxn(txn, id); err != nil {
			return err
		}
		if err := txn.Delete(tableNodes, existing); err != nil {
			return fmt.Errorf("state: node delete: %w", err)
		}
		deleted = true
	}
	if !deleted {
		return nil
	}
	if err := txn.bumpIndex(tableNodes); err != nil {
		return err
	}
	return s.reconcileJobsTxn(txn, touched, nil)
}

// addNodeEvent records an event on a node copy at the transaction's index.
func addNodeEvent(txn *Txn, node *structs.Node, ev *api.NodeEvent) {
	if ev == nil {
		return
	}
	c := *ev
	if c.CreateIndex == 0 {
		c.CreateIndex = txn.Index
	}
	node.AddNodeEvent(&c)
}

func (s *StateStore) putNodeTxn(txn *Txn, node *structs.Node) error {
	node.ModifyIndex = txn.Index
	if err := txn.Insert(tableNodes, node); err != nil {
		return fmt.Errorf("state: node update: %w", err)
	}
	return txn.bumpIndex(tableNodes)
}

// UpdateAllocsDesiredTransitionTxn merges the given transitions into the allocations' desired
// transitions. Unknown allocations are skipped (their job was purged meanwhile).
func (s *StateStore) UpdateAllocsDesiredTransitionTxn(txn *Txn, transitions map[string]*api.DesiredTransition, updatedAt int64) error {
	changed := false
	for id, tr := range transitions {
		existing, err := allocByIDTxn(txn.Txn, nil, id)
		if err != nil {
			return err
		}
		if existing == nil || tr == nil {
			continue
		}
		updated := existing.Copy()
		mergeTransition(&updated.DesiredTransition, tr)
		updated.ModifyIndex, updated.ModifyTime = txn.Index, updatedAt
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return fmt.Errorf("state: alloc transition: %w", err)
		}
		changed = true
	}
	return txn.bumpIndexIf(changed, tableAllocs)
}

func mergeTransition(dst *api.DesiredTransition, src *api.DesiredTransition) {
	for _, f := range []struct{ d, s **bool }{
		{&dst.Migrate, &src.Migrate}, {&dst.Reschedule, &src.Reschedule},
		{&dst.ForceReschedule, &src.ForceReschedule}, {&dst.NoShutdownDelay, &src.NoShutdownDelay},
		{&dst.MigrateDisablePlacement, &src.MigrateDisablePlacement},
	} {
		if *f.s != nil {
			v := **f.s
			*f.d = &v
		}
	}
}
