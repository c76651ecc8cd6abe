package state

import (
	"fmt"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// builtInNodePools are the pools that always exist. They are not rows: a fresh value per call,
// at index 1, so no caller can change them and no write needs to create them.
func builtInNodePools() []*structs.NodePool {
	return []*structs.NodePool{
		{Name: structs.NodePoolAll, Description: "Node pool with all nodes in the cluster.", CreateIndex: 1, ModifyIndex: 1},
		{Name: structs.NodePoolDefault, Description: "Default node pool.", CreateIndex: 1, ModifyIndex: 1},
	}
}

// UpsertNodePoolsTxn creates or updates node pools. The built-in pools are refused.
func (s *StateStore) UpsertNodePoolsTxn(txn *Txn, pools []*structs.NodePool) error {
	for _, p := range pools {
		if p == nil || p.Name == "" {
			return structs.BadRequest("missing node pool name")
		}
		if p.IsBuiltIn() {
			return structs.BadRequest("modifying node pool %q is not allowed", p.Name)
		}
		if err := nodePoolRows.upsert(txn, p.Copy(), nil); err != nil {
			return err
		}
	}
	return txn.bumpIndex(tableNodePools)
}

// ensureNodePoolTxn creates the pool a registering node names when it does not exist yet,
// as upstream does, so a client configured with a new pool needs no prior API call.
func (s *StateStore) ensureNodePoolTxn(txn *Txn, name string) error {
	if name == "" || structs.IsBuiltInNodePool(name) {
		return nil
	}
	existing, err := txn.First(tableNodePools, indexID, name)
	if err != nil {
		return fmt.Errorf("state: node pool lookup: %w", err)
	}
	if existing != nil {
		return nil
	}
	return s.UpsertNodePoolsTxn(txn, []*structs.NodePool{{Name: name}})
}

// DeleteNodePoolsTxn deletes node pools that no node is in and no live job uses; a built-in
// pool cannot be deleted. Either every name is deleted or none.
func (s *StateStore) DeleteNodePoolsTxn(txn *Txn, names []string) error {
	for _, name := range names {
		if structs.IsBuiltInNodePool(name) {
			return structs.BadRequest("deleting built-in node pool %q is not allowed", name)
		}
		existing, err := txn.First(tableNodePools, indexID, name)
		if err != nil {
			return fmt.Errorf("state: node pool lookup: %w", err)
		}
		if existing == nil {
			return structs.NotFound(structs.ErrNodePoolNotFound)
		}
		nodes, err := txn.Get(tableNodes, indexID)
		if err != nil {
			return fmt.Errorf("state: node list: %w", err)
		}
		for raw := nodes.Next(); raw != nil; raw = nodes.Next() {
			if raw.(*structs.Node).NodePool == name {
				return structs.BadRequest("node pool %q has nodes in regions: [%s]", name, structs.DefaultRegion)
			}
		}
		jobs, err := txn.Get(tableJobs, indexID)
		if err != nil {
			return fmt.Errorf("state: job list: %w", err)
		}
		for raw := jobs.Next(); raw != nil; raw = jobs.Next() {
			if j := raw.(*structs.Job); j.NodePool == name && j.Status != structs.JobStatusDead {
				return structs.BadRequest("node pool %q has non-terminal jobs in regions: [%s]", name, j.Region)
			}
		}
		if err := txn.Delete(tableNodePools, existing); err != nil {
			return fmt.Errorf("state: node pool delete: %w", err)
		}
	}
	return txn.bumpIndex(tableNodePools)
}

// NodePoolByName reads one node pool, built-in ones included; nil when unknown.
func (s *StateStore) NodePoolByName(ws memdb.WatchSet, name string) (*structs.NodePool, error) {
	for _, p := range builtInNodePools() {
		if p.Name == name {
			return p, nil
		}
	}
	p, err := first[*structs.NodePool](s.db.Txn(false), ws, "node pool lookup", tableNodePools, indexID, name)
	if err != nil || p == nil {
		return nil, err
	}
	return p.Copy(), nil
}

// NodePools lists node pools whose name starts with prefix, built-in ones included, by name.
func (s *StateStore) NodePools(ws memdb.WatchSet, prefix string) ([]*structs.NodePool, error) {
	iter, err := s.db.Txn(false).Get(tableNodePools, indexID+"_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("state: node pool list: %w", err)
	}
	ws.Add(iter.WatchCh())
	var out []*structs.NodePool
	for _, p := range builtInNodePools() {
		if strings.HasPrefix(p.Name, prefix) {
			out = append(out, p)
		}
	}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		out = append(out, raw.(*structs.NodePool).Copy())
	}
	slices.SortFunc(out, func(a, b *structs.NodePool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
