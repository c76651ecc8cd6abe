package state

import "github.com/nomadfork/nomad/structs"

// The node and allocation writes of the Raft log that carry evaluations, each one whole
// transaction: a change and the evaluations it makes (for the jobs with allocations on the
// node) commit together, so a leader change never leaves a status change without its
// evaluations. The FSM decodes an entry and calls one of these; the state tests call the
// same functions.

// ApplyNodeRegister stores a node (new, or registering again) and its evaluations.
func (s *StateStore) ApplyNodeRegister(index uint64, req *structs.NodeRegisterRequest) error {
	txn := s.WriteTxn(structs.NodeRegisterRequestType, index, nil)
	defer txn.Abort()
	if err := s.UpsertNodeTxn(txn, req.Node); err != nil {
		return err
	}
	return s.commitWithEvals(txn, req.Evals)
}

// ApplyNodeStatusUpdate sets a node's status (its allocations follow it) with its evaluations.
func (s *StateStore) ApplyNodeStatusUpdate(index uint64, req *structs.NodeUpdateStatusRequest) error {
	txn := s.WriteTxn(structs.NodeUpdateStatusRequestType, index, nil)
	defer txn.Abort()
	if err := s.UpdateNodeStatusTxn(txn, req.NodeID, req.Status, req.UpdatedAt); err != nil {
		return err
	}
	return s.commitWithEvals(txn, req.Evals)
}

// ApplyNodeDrainUpdate starts, changes or clears a node's drain, crediting the actor, with
// its evaluations.
func (s *StateStore) ApplyNodeDrainUpdate(index uint64, req *structs.NodeUpdateDrainRequest) error {
	txn := s.WriteTxn(structs.NodeUpdateDrainRequestType, index, &TxnMeta{Actor: req.Actor})
	defer txn.Abort()
	if err := s.UpdateNodeDrainTxn(txn, req.NodeID, req.DrainStrategy, req.MarkEligible, req.Meta, req.Actor, req.UpdatedAt); err != nil {
		return err
	}
	return s.commitWithEvals(txn, req.Evals)
}

// ApplyNodeEligibilityUpdate sets a node's scheduling eligibility with its evaluations.
func (s *StateStore) ApplyNodeEligibilityUpdate(index uint64, req *structs.NodeUpdateEligibilityRequest) error {
	txn := s.WriteTxn(structs.NodeUpdateEligibilityRequestType, index, nil)
	defer txn.Abort()
	if err := s.UpdateNodeEligibilityTxn(txn, req.NodeID, req.Eligibility, req.UpdatedAt); err != nil {
		return err
	}
	return s.commitWithEvals(txn, req.Evals)
}

// ApplyNodeDeregister removes nodes (their unfinished allocations become lost) with the
// evaluations that replace those allocations.
func (s *StateStore) ApplyNodeDeregister(index uint64, req *structs.NodeDeregisterRequest) error {
	txn := s.WriteTxn(structs.NodeDeregisterRequestType, index, nil)
	defer txn.Abort()
	if err := s.DeleteNodesTxn(txn, req.NodeIDs, req.UpdatedAt); err != nil {
		return err
	}
	return s.commitWithEvals(txn, req.Evals)
}

// ApplyAllocDesiredTransition merges desired transitions (a drain's migrations) into
// allocations, with the evaluations that place their replacements.
func (s *StateStore) ApplyAllocDesiredTransition(index uint64, req *structs.AllocUpdateDesiredTransitionRequest) error {
	txn := s.WriteTxn(structs.AllocUpdateDesiredTransitionRequestType, index, nil)
	defer txn.Abort()
	if err := s.UpdateAllocsDesiredTransitionTxn(txn, req.Allocs, req.UpdatedAt); err != nil {
		return err
	}
	return s.commitWithEvals(txn, req.Evals)
}

// ApplyAllocClientUpdate stores what a client reports of its allocations, with the
// evaluations the server made for the failures among them.
func (s *StateStore) ApplyAllocClientUpdate(index uint64, req *structs.AllocUpdateRequest) error {
	txn := s.WriteTxn(structs.AllocClientUpdateRequestType, index, nil)
	defer txn.Abort()
	if err := s.UpdateAllocsFromClientTxn(txn, req.NodeID, req.Alloc, req.UpdatedAt); err != nil {
		return err
	}
	return s.commitWithEvals(txn, req.Evals)
}

// commitWithEvals adds a write's evaluations to its transaction and commits it whole.
func (s *StateStore) commitWithEvals(txn *Txn, evals []*structs.Evaluation) error {
	if err := s.UpsertEvalsTxn(txn, evals); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
