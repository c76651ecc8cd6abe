package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// upsertJobScalingPoliciesTxn makes the job's policy rows match its scaling blocks, in the
// job's own write: new blocks add rows, changed ones rewrite them (keeping CreateIndex),
// removed ones delete them, and unchanged rows keep their ModifyIndex.
func (s *StateStore) upsertJobScalingPoliciesTxn(txn *Txn, job *structs.Job) error {
	existing, err := jobScalingPoliciesTxn(txn.Txn, nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	byGroup := map[string]*structs.ScalingPolicy{}
	for _, p := range existing {
		byGroup[p.Group] = p
	}
	changed := false
	for _, p := range structs.JobScalingPolicies(job) {
		if p.ID == "" {
			return structs.BadRequest("scaling policy of group %q has no ID", p.Group)
		}
		prev := byGroup[p.Group]
		delete(byGroup, p.Group)
		if prev != nil && prev.SameSpec(p) {
			continue
		}
		p.CreateIndex, p.ModifyIndex = txn.Index, txn.Index
		if prev != nil {
			p.CreateIndex = prev.CreateIndex
			if prev.ID != p.ID {
				if err := txn.Delete(tableScalingPolicies, prev); err != nil {
					return fmt.Errorf("state: scaling policy delete: %w", err)
				}
			}
		}
		if err := txn.Insert(tableScalingPolicies, p); err != nil {
			return fmt.Errorf("state: scaling policy insert: %w", err)
		}
		changed = true
	}
	for _, gone := range byGroup {
		if err := txn.Delete(tableScalingPolicies, gone); err != nil {
			return fmt.Errorf("state: scaling policy delete: %w", err)
		}
		changed = true
	}
	return txn.bumpIndexIf(changed, tableScalingPolicies)
}

// deleteJobScalingPoliciesTxn deletes a purged job's policies.
func (s *StateStore) deleteJobScalingPoliciesTxn(txn *Txn, namespace, jobID string) error {
	existing, err := jobScalingPoliciesTxn(txn.Txn, nil, namespace, jobID)
	if err != nil || len(existing) == 0 {
		return err
	}
	for _, p := range existing {
		if err := txn.Delete(tableScalingPolicies, p); err != nil {
			return fmt.Errorf("state: scaling policy delete: %w", err)
		}
	}
	return txn.bumpIndex(tableScalingPolicies)
}

// jobScalingPoliciesTxn lists one job's policies. The target index is searched by prefix,
// which would also match jobs whose ID extends this one ("web" and "web2"): only exact
// matches are kept.
func jobScalingPoliciesTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) ([]*structs.ScalingPolicy, error) {
	iter, err := txn.Get(tableScalingPolicies, indexTarget+"_prefix", namespace, jobID, "")
	if err != nil {
		return nil, fmt.Errorf("state: scaling policy lookup: %w", err)
	}
	ws.Add(iter.WatchCh())
	var out []*structs.ScalingPolicy
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if p := raw.(*structs.ScalingPolicy); p.JobID == jobID {
			out = append(out, p)
		}
	}
	return out, nil
}

// ScalingPolicyByID reads one policy; nil when unknown.
func (s *StateStore) ScalingPolicyByID(ws memdb.WatchSet, id string) (*structs.ScalingPolicy, error) {
	return first[*structs.ScalingPolicy](s.db.Txn(false), ws, "scaling policy lookup", tableScalingPolicies, indexID, id)
}

// ScalingPolicies lists the policies of a namespace ("*" for all), of one job when jobID is
// set, ordered by namespace, job and group.
func (s *StateStore) ScalingPolicies(ws memdb.WatchSet, namespace, jobID string) ([]*structs.ScalingPolicy, error) {
	txn := s.db.Txn(false)
	if namespace != structs.AllNamespacesSentinel && jobID != "" {
		return jobScalingPoliciesTxn(txn, ws, namespace, jobID)
	}
	iter, err := txn.Get(tableScalingPolicies, indexTarget)
	if err != nil {
		return nil, fmt.Errorf("state: scaling policy list: %w", err)
	}
	ws.Add(iter.WatchCh())
	var out []*structs.ScalingPolicy
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		p := raw.(*structs.ScalingPolicy)
		if (namespace == structs.AllNamespacesSentinel || p.Namespace == namespace) && (jobID == "" || p.JobID == jobID) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out, nil
}
