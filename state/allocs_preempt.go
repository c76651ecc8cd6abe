package state

import (
	"fmt"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// preemptAllocsTxn evicts the plan's preempted allocations whose preempting placement was
// applied in this transaction (placed): a placement dropped because its job changed evicts
// nothing. An allocation already terminal is left alone. It reports whether it wrote.
func (s *StateStore) preemptAllocsTxn(txn *Txn, req *structs.ApplyPlanResultsRequest, placed map[string]bool, touched jobSet, deployments map[string]bool) (bool, error) {
	wrote := false
	for _, p := range req.AllocsPreempted {
		if p == nil || !placed[p.PreemptedByAllocation] {
			continue
		}
		existing, err := allocByIDTxn(txn.Txn, nil, p.AllocID)
		if err != nil {
			return false, err
		}
		if existing == nil || existing.TerminalStatus() {
			continue
		}
		updated := existing.Copy()
		updated.DesiredStatus = structs.AllocDesiredStatusEvict
		updated.DesiredDescription = "Preempted by alloc ID " + p.PreemptedByAllocation
		updated.PreemptedByAllocation = p.PreemptedByAllocation
		updated.ModifyIndex, updated.AllocModifyIndex, updated.ModifyTime = txn.Index, txn.Index, req.UpdatedAt
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return false, fmt.Errorf("state: alloc preempt: %w", err)
		}
		touched.add(updated.Namespace, updated.JobID)
		deployments[updated.DeploymentID] = true
		wrote = true
	}
	return wrote, nil
}

// loseAllocsTxn marks the plan's lost allocations (unknown past their lost_after) lost and
// stopped. One whose client reported since the plan was computed (it reconnected) is left to
// the next evaluation. It reports whether it wrote.
func (s *StateStore) loseAllocsTxn(txn *Txn, req *structs.ApplyPlanResultsRequest, touched jobSet, deployments map[string]bool) (bool, error) {
	wrote := false
	for _, l := range req.AllocsLost {
		if l == nil {
			continue
		}
		existing, err := allocByIDTxn(txn.Txn, nil, l.AllocID)
		if err != nil {
			return false, err
		}
		if existing == nil || existing.ClientStatus != structs.AllocClientStatusUnknown {
			continue
		}
		updated := existing.Copy()
		updated.ClientStatus = structs.AllocClientStatusLost
		updated.ClientDescription = "alloc is lost since its node stayed disconnected"
		updated.DesiredStatus = structs.AllocDesiredStatusStop
		updated.DesiredDescription = l.DesiredDescription
		updated.AllocStates = append(updated.AllocStates, &structs.AllocState{
			Field: structs.AllocStateFieldClientStatus, Value: structs.AllocClientStatusLost, Time: time.Unix(0, req.UpdatedAt).UTC(),
		})
		updated.ModifyIndex, updated.AllocModifyIndex, updated.ModifyTime = txn.Index, txn.Index, req.UpdatedAt
		if err := txn.Insert(tableAllocs, updated); err != nil {
			return false, fmt.Errorf("state: alloc lost: %w", err)
		}
		touched.add(updated.Namespace, updated.JobID)
		deployments[updated.DeploymentID] = true
		wrote = true
	}
	return wrote, nil
}
