package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// UpsertNodeTxn registers a node or replaces a registered one, keeping its CreateIndex and
// what the servers own of it: its drain and its scheduling eligibility. A client that
// registers again (after a restart, say) must not end a drain or undo an operator's choice.
func (s *StateStore) UpsertNodeTxn(txn *Txn, node *structs.Node) error {
	existing, err := nodeByIDTxn(txn.Txn, nil, node.ID)
	if err != nil {
		return err
	}
	node.ModifyIndex = txn.Index
	node.CreateIndex = txn.Index
	incoming := node.Events
	node.Events = nil
	if existing != nil {
		node.CreateIndex = existing.CreateIndex
		node.Drain, node.DrainStrategy, node.LastDrain = existing.Drain, existing.DrainStrategy, existing.LastDrain
		node.SchedulingEligibility = existing.SchedulingEligibility
		node.Events = append([]*api.NodeEvent(nil), existing.Events...)
	}
	for _, ev := range incoming {
		addNodeEvent(txn, node, ev)
	}
	if err := txn.Insert(tableNodes, node); err != nil {
		return fmt.Errorf("state: node insert: %w", err)
	}
	if err := s.ensureNodePoolTxn(txn, node.NodePool); err != nil {
		return err
	}
	return txn.bumpIndex(tableNodes)
}

// UpdateNodeStatusTxn sets a node's status. When the node goes down, every allocation on it
// that its client had not finished becomes lost, in the same transaction (when it is only
// disconnected, those of groups with a disconnect lost_after become unknown instead), and the jobs they
// belong to get their summaries and statuses derived again. updatedAt is unix nanoseconds.
func (s *StateStore) UpdateNodeStatusTxn(txn *Txn, nodeID, status string, updatedAt int64) error {
	existing, err := nodeByIDTxn(txn.Txn, nil, nodeID)
	if err != nil {
		return err
	}
	if existing == nil {
		return structs.NotFound(structs.ErrNodeNotFound)
	}
	updated := existing.Copy()
	updated.Status = status
	updated.StatusUpdatedAt = updatedAt / 1e9
	updated.ModifyIndex = txn.Index
	if err := txn.Insert(tableNodes, updated); err != nil {
		return fmt.Errorf("state: node update: %w", err)
	}
	if err := txn.bumpIndex(tableNodes); err != nil {
		return err
	}
	if status != structs.NodeStatusDown && status != structs.NodeStatusDisconnected {
		return nil
	}
	touched, err := s.markNodeAllocsLostTxn(txn, nodeID, updatedAt, status == structs.NodeStatusDisconnected)
	if err != nil {
		return err
	}
	return s.reconcileJobsTxn(txn, touched, nil)
}

// NodeByID reads one node; nil when unknown. The row carries the SecretID: callers that
// answer anyone but the node itself must sanitize it.
func (s *StateStore) NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error) {
	return nodeByIDTxn(s.db.Txn(false), ws, id)
}

func nodeByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Node, error) {
	return first[*structs.Node](txn, ws, "node lookup", tableNodes, indexID, id)
}

// NodeBySecretID finds the node a secret belongs to; nil when none.
func (s *StateStore) NodeBySecretID(ws memdb.WatchSet, secret string) (*structs.Node, error) {
	return first[*structs.Node](s.db.Txn(false), ws, "node lookup by secret", tableNodes, indexSecretID, secret)
}

// Nodes lists nodes whose ID starts with prefix, sorted by ID.
func (s *StateStore) Nodes(ws memdb.WatchSet, prefix string) ([]*structs.Node, error) {
	out, err := list[*structs.Node](s.db.Txn(false), ws, "node list", tableNodes, indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
