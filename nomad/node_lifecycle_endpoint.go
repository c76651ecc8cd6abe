package nomad

import (
	"github.com/nomadfork/nomad/structs"
)

// The operator's node lifecycle calls: drain, eligibility, purge and forced evaluation. Each
// needs node write access from an ACL token; a node's own secret is not enough, since these
// act on what runs there for every job.

// nodeForWrite reads the node a lifecycle call is about, on the leader.
func (s *Server) nodeForWrite(nodeID string) (*structs.Node, error) {
	node, err := s.State().NodeByID(nil, nodeID)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return node, nil
}

// nodeMissingID refuses a lifecycle call that names no node.
func nodeMissingID(nodeID string) error {
	if nodeID == "" {
		return structs.BadRequest("missing node ID")
	}
	return nil
}

var nodeUpdateDrain = write("Node.UpdateDrain", spec[structs.NodeUpdateDrainRequest, structs.NodeDrainUpdateResponse]{
	Authorize: nodeWriteRule[structs.NodeUpdateDrainRequest],
	Validate:  func(req *structs.NodeUpdateDrainRequest) error { return nodeMissingID(req.NodeID) },
	Serve: func(c *rpcCall, args *structs.NodeUpdateDrainRequest, reply *structs.NodeDrainUpdateResponse) error {
		node, err := c.srv.nodeForWrite(args.NodeID)
		if err != nil {
			return err
		}
		t := now()
		args.UpdatedAt = t.UnixNano()
		args.Actor = c.actor
		args.Evals = nil
		if args.DrainStrategy != nil {
			args.DrainStrategy = structs.NewDrainStrategy(args.DrainStrategy.DrainSpec, t)
		} else if args.MarkEligible && node.SchedulingEligibility != structs.NodeSchedulingEligible {
			// Eligible again: the system jobs get the node back.
			if args.Evals, err = c.srv.nodeEvals(node, structs.NodeStatusReady, args.UpdatedAt); err != nil {
				return err
			}
		}
		return applyDrainWrite(c, structs.NodeUpdateDrainRequestType, args, args.Evals, reply)
	},
})

// UpdateDrain starts, updates or (with a nil DrainStrategy) cancels a node's drain. Only the
// strategy's DrainSpec is read from the caller; the leader fixes its start and deadline.
func (n *Node) UpdateDrain(args *structs.NodeUpdateDrainRequest, reply *structs.NodeDrainUpdateResponse) error {
	return nodeUpdateDrain.Call(n.srv, args, reply)
}

var nodeUpdateEligibility = write("Node.UpdateEligibility", spec[structs.NodeUpdateEligibilityRequest, structs.NodeDrainUpdateResponse]{
	Authorize: nodeWriteRule[structs.NodeUpdateEligibilityRequest],
	Validate: func(req *structs.NodeUpdateEligibilityRequest) error {
		switch req.Eligibility {
		case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
		default:
			return structs.BadRequest("invalid Eligibility %q: must be %q or %q", req.Eligibility,
				structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible)
		}
		return nodeMissingID(req.NodeID)
	},
	Serve: func(c *rpcCall, args *structs.NodeUpdateEligibilityRequest, reply *structs.NodeDrainUpdateResponse) error {
		node, err := c.srv.nodeForWrite(args.NodeID)
		if err != nil {
			return err
		}
		if node.DrainStrategy != nil && args.Eligibility == structs.NodeSchedulingEligible {
			return structs.BadRequest("can not set node's scheduling eligibility to eligible while it is draining")
		}
		if node.SchedulingEligibility == args.Eligibility {
			fillDrainReply(reply, nil, node.ModifyIndex)
			return nil
		}
		t := now()
		args.UpdatedAt = t.UnixNano()
		args.Evals = nil
		if args.Eligibility == structs.NodeSchedulingEligible {
			if args.Evals, err = c.srv.nodeEvals(node, structs.NodeStatusReady, args.UpdatedAt); err != nil {
				return err
			}
		}
		return applyDrainWrite(c, structs.NodeUpdateEligibilityRequestType, args, args.Evals, reply)
	},
})

// UpdateEligibility marks a node eligible or ineligible for new placements. What runs there
// keeps running. A draining node cannot be made eligible; an unchanged eligibility writes
// nothing.
func (n *Node) UpdateEligibility(args *structs.NodeUpdateEligibilityRequest, reply *structs.NodeDrainUpdateResponse) error {
	return nodeUpdateEligibility.Call(n.srv, args, reply)
}

// applyDrainWrite applies a drain or eligibility write through Raft and answers with the
// evaluations it carried.
func applyDrainWrite(c *rpcCall, t structs.MessageType, args any, evals []*structs.Evaluation, reply *structs.NodeDrainUpdateResponse) error {
	index, err := c.srv.raftApply(t, args)
	if err != nil {
		return err
	}
	fillDrainReply(reply, evals, index)
	return nil
}

func fillDrainReply(reply *structs.NodeDrainUpdateResponse, evals []*structs.Evaluation, index uint64) {
	reply.EvalIDs, reply.EvalCreateIndex = evalsWritten(evals, index)
	reply.NodeModifyIndex, reply.Index = index, index
}

// evalsWritten is what a node write answers about the evaluations it wrote at index: their
// IDs, and the index they were created at (0 when there were none).
func evalsWritten(evals []*structs.Evaluation, index uint64) (ids []string, createIndex uint64) {
	for _, e := range evals {
		ids = append(ids, e.ID)
	}
	if len(evals) > 0 {
		createIndex = index
	}
	return ids, createIndex
}

var nodeDeregister = write("Node.Deregister", spec[structs.NodeDeregisterRequest, structs.NodeUpdateResponse]{
	Authorize: nodeWriteRule[structs.NodeDeregisterRequest],
	Validate: func(req *structs.NodeDeregisterRequest) error {
		if len(req.NodeIDs) != 1 {
			return structs.BadRequest("missing node ID for deregistering")
		}
		return nodeMissingID(req.NodeIDs[0])
	},
	Serve: func(c *rpcCall, args *structs.NodeDeregisterRequest, reply *structs.NodeUpdateResponse) error {
		node, err := c.srv.nodeForWrite(args.NodeIDs[0])
		if err != nil {
			return err
		}
		t := now()
		args.UpdatedAt = t.UnixNano()
		if args.Evals, err = c.srv.nodeEvals(node, structs.NodeStatusDown, args.UpdatedAt); err != nil {
			return err
		}
		index, err := c.srv.raftApply(structs.NodeDeregisterRequestType, args)
		if err != nil {
			return err
		}
		c.srv.clearHeartbeat(node.ID)
		c.srv.Endpoints.Node.fillReply(reply, args.Evals, index)
		return nil
	},
})

// Deregister removes a node (upstream's purge). Allocations its client had not finished are
// lost and replaced elsewhere through the evaluations written with the removal. A node that
// is still alive registers again at its next heartbeat.
func (n *Node) Deregister(args *structs.NodeDeregisterRequest, reply *structs.NodeUpdateResponse) error {
	return nodeDeregister.Call(n.srv, args, reply)
}

var nodeEvaluate = write("Node.Evaluate", spec[structs.NodeEvaluateRequest, structs.NodeUpdateResponse]{
	Authorize: nodeWriteRule[structs.NodeEvaluateRequest],
	Validate:  func(req *structs.NodeEvaluateRequest) error { return nodeMissingID(req.NodeID) },
	Serve: func(c *rpcCall, args *structs.NodeEvaluateRequest, reply *structs.NodeUpdateResponse) error {
		node, err := c.srv.nodeForWrite(args.NodeID)
		if err != nil {
			return err
		}
		t := now().UnixNano()
		evals, err := c.srv.nodeEvals(node, structs.NodeStatusDown, t)
		if err != nil {
			return err
		}
		system, err := c.srv.nodeEvals(node, structs.NodeStatusReady, t)
		if err != nil {
			return err
		}
		seen := map[structs.NamespacedID]bool{}
		for _, e := range evals {
			seen[structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}] = true
		}
		for _, e := range system {
			if !seen[structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}] {
				evals = append(evals, e)
			}
		}
		index := node.ModifyIndex
		if len(evals) > 0 {
			if index, err = c.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
				return err
			}
		}
		c.srv.Endpoints.Node.fillReply(reply, evals, index)
		return nil
	},
})

// Evaluate creates an evaluation of every job with an allocation running on the node and of
// every system job, so the scheduler looks at the node again. With none, nothing is written.
func (n *Node) Evaluate(args *structs.NodeEvaluateRequest, reply *structs.NodeUpdateResponse) error {
	return nodeEvaluate.Call(n.srv, args, reply)
}
