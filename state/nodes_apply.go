package state

import "github.com/nomadfork/nomad/structs"

// The node and allocation writes of the Raft log that carry evaluations, each one whole
// transaction: a change and the evaluations it makes (for the jobs with allocations on the
// node) commit together, so a leader change never leaves a status change without its
// evaluations. The FSM decodes an entry and calls one of these; the state tests call the
// same functions.

// ApplyNodeRegister stores a node (new, or registering again) and its evaluations.
func (s *StateStore) ApplyNodeRegister(index uint64, req *structs.NodeRegisterRequest) error {
	return s.applyWithEvals(structs.NodeRegisterRequestType, index, nil, req.Evals, func(txn *Txn) error {
		return s.UpsertNodeTxn(txn, req.Node)
	})
}

// ApplyNodeStatusUpdate sets a node's status (its allocations follow it) with its evaluations.
func (s *StateStore) ApplyNodeStatusUpdate(index uint64, req *structs.NodeUpdateStatusRequest) error {
	return s.applyWithEvals(structs.NodeUpdateStatusRequestType, index, nil, req.Evals, func(txn *Txn) error {
		return s.UpdateNodeStatusTxn(txn, req.NodeID, req.Status, req.UpdatedAt)
	})
}

// ApplyNodeDrainUpdate starts, changes or clears a node's drain, crediting the actor, with
// its evaluations.
func (s *StateStore) ApplyNodeDrainUpdate(index uint64, req *structs.NodeUpdateDrainRequest) error {
	return s.applyWithEvals(structs.NodeUpdateDrainRequestType, index, &TxnMeta{Actor: req.Actor}, req.Evals, func(txn *Txn) error {
		return s.UpdateNodeDrainTxn(txn, req.NodeID, req.DrainStrategy, req.MarkEligible, req.Meta, req.Actor, req.UpdatedAt)
	})
}

// ApplyNodeEligibilityUpdate sets a node's scheduling eligibility with its evaluations.
func (s *StateStore) ApplyNodeEligibilityUpdate(index uint64, req *structs.NodeUpdateEligibilityRequest) error {
	return s.applyWithEvals(structs.NodeUpdateEligibilityRequestType, index, nil, req.Evals, func(txn *Txn) error {
		return s.UpdateNodeEligibilityTxn(txn, req.NodeID, req.Eligibility, req.UpdatedAt)
	})
}

// ApplyNodeDeregister removes nodes (their unfinished allocations become lost) with the
// evaluations that replace those allocations.
func (s *StateStore) ApplyNodeDeregister(index uint64, req *structs.NodeDeregisterRequest) error {
	return s.applyWithEvals(structs.NodeDeregisterRequestType, index, nil, req.Evals, func(txn *Txn) error {
		return s.DeleteNodesTxn(txn, req.NodeIDs, req.UpdatedAt)
	})
}

// ApplyAllocDesiredTransition merges desired transitions (a drain's migrations) into
// allocations, with the evaluations that place their replacements.
func (s *StateStore) ApplyAllocDesiredTransition(index uint64, req *structs.AllocUpdateDesiredTransitionRequest) error {
	return s.applyWithEvals(structs.AllocUpdateDesiredTransitionRequestType, index, nil, req.Evals, func(txn *Txn) error {
		return s.UpdateAllocsDesiredTransitionTxn(txn, req.Allocs, req.UpdatedAt)
	})
}

// ApplyAllocClientUpdate stores what a client reports of its allocations, with the
// evaluations the server made for the failures among them.
func (s *StateStore) ApplyAllocClientUpdate(index uint64, req *structs.AllocUpdateRequest) error {
	return s.applyWithEvals(structs.AllocClientUpdateRequestType, index, nil, req.Evals, func(txn *Txn) error {
		return s.UpdateAllocsFromClientTxn(txn, req.NodeID, req.Alloc, req.UpdatedAt)
	})
}

// applyWithEvals is apply for a write that carries evaluations: they are written in the same
// transaction, after the change that calls for them.
func (s *StateStore) applyWithEvals(msgType structs.MessageType, index uint64, meta *TxnMeta, evals []*structs.Evaluation, write func(txn *Txn) error) error {
	return s.apply(msgType, index, meta, func(txn *Txn) error {
		if err := write(txn); err != nil {
			return err
		}
		return s.UpsertEvalsTxn(txn, evals)
	})
}
