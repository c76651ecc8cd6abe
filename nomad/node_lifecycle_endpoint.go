package nomad

import (
	"github.com/nomadfork/nomad/structs"
)

// The operator's node lifecycle calls: drain, eligibility, purge and forced evaluation. Each
// needs node write access from an ACL token; a node's own secret is not enough, since these
// act on what runs there for every job.

// authorizeNodeWrite resolves token and checks node write access: the one ACL call of these
// endpoints. It returns who is asking, for the drain record.
func (s *Server) authorizeNodeWrite(token string) (*structs.Actor, error) {
	aclObj, actor, err := s.resolveACL(token)
	if err != nil {
		return nil, err
	}
	if !aclObj.AllowNodeWrite() {
		return nil, structs.PermissionDenied("node write access required")
	}
	return actor, nil
}

// nodeForWrite reads the node a lifecycle call is about, after the leader check.
func (s *Server) nodeForWrite(nodeID string) (*structs.Node, error) {
	if nodeID == "" {
		return nil, structs.BadRequest("missing node ID")
	}
	if err := s.checkLeader(); err != nil {
		return nil, err
	}
	node, err := s.State().NodeByID(nil, nodeID)
	if err != nil {
		return nil, err
	}
	if node == nil {
		return nil, structs.NotFound(structs.ErrNodeNotFound)
	}
	return node, nil
}

// UpdateDrain starts, updates or (with a nil DrainStrategy) cancels a node's drain. Only the
// strategy's DrainSpec is read from the caller; the leader fixes its start and deadline.
func (n *Node) UpdateDrain(args *structs.NodeUpdateDrainRequest, reply *structs.NodeDrainUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateDrain", args, reply); done {
		return err
	}
	actor, err := n.srv.authorizeNodeWrite(args.AuthToken)
	if err != nil {
		return err
	}
	node, err := n.srv.nodeForWrite(args.NodeID)
	if err != nil {
		return err
	}
	t := now()
	args.UpdatedAt = t.UnixNano()
	args.Actor = actor
	args.Evals = nil
	if args.DrainStrategy != nil {
		args.DrainStrategy = structs.NewDrainStrategy(args.DrainStrategy.DrainSpec, t)
	} else if args.MarkEligible && node.SchedulingEligibility != structs.NodeSchedulingEligible {
		// Eligible again: the system jobs get the node back.
		if args.Evals, err = n.srv.nodeEvals(node, structs.NodeStatusReady, args.UpdatedAt); err != nil {
			return err
		}
	}
	index, err := n.srv.raftApply(structs.NodeUpdateDrainRequestType, args)
	if err != nil {
		return err
	}
	fillDrainReply(reply, args.Evals, index)
	return nil
}

// UpdateEligibility marks a node eligible or ineligible for new placements. What runs there
// keeps running. A draining node cannot be made eligible; an unchanged eligibility writes
// nothing.
func (n *Node) UpdateEligibility(args *structs.NodeUpdateEligibilityRequest, reply *structs.NodeDrainUpdateResponse) error {
	if done, err := n.srv.forward("Node.UpdateEligibility", args, reply); done {
		return err
	}
	if _, err := n.srv.authorizeNodeWrite(args.AuthToken); err != nil {
		return err
	}
	switch args.Eligibility {
	case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
	default:
		return structs.BadRequest("invalid Eligibility %q: must be %q or %q", args.Eligibility,
			structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible)
	}
	node, err := n.srv.nodeForWrite(args.NodeID)
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
		if args.Evals, err = n.srv.nodeEvals(node, structs.NodeStatusReady, args.UpdatedAt); err != nil {
			return err
		}
	}
	index, err := n.srv.raftApply(structs.NodeUpdateEligibilityRequestType, args)
	if err != nil {
		return err
	}
	fillDrainReply(reply, args.Evals, index)
	return nil
}

func fillDrainReply(reply *structs.NodeDrainUpdateResponse, evals []*structs.Evaluation, index uint64) {
	for _, e := range evals {
		reply.EvalIDs = append(reply.EvalIDs, e.ID)
	}
	if len(evals) > 0 {
		reply.EvalCreateIndex = index
	}
	reply.NodeModifyIndex = index
	reply.Index = index
}

// Deregister removes a node (upstream's purge). Allocations its client had not finished are
// lost and replaced elsewhere through the evaluations written with the removal. A node that
// is still alive registers again at its next heartbeat.
func (n *Node) Deregister(args *structs.NodeDeregisterRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.forward("Node.Deregister", args, reply); done {
		return err
	}
	if _, err := n.srv.authorizeNodeWrite(args.AuthToken); err != nil {
		return err
	}
	if len(args.NodeIDs) != 1 {
		return structs.BadRequest("missing node ID for deregistering")
	}
	node, err := n.srv.nodeForWrite(args.NodeIDs[0])
	if err != nil {
		return err
	}
	t := now()
	args.UpdatedAt = t.UnixNano()
	if args.Evals, err = n.srv.nodeEvals(node, structs.NodeStatusDown, args.UpdatedAt); err != nil {
		return err
	}
	index, err := n.srv.raftApply(structs.NodeDeregisterRequestType, args)
	if err != nil {
		return err
	}
	n.srv.clearHeartbeat(node.ID)
	n.fillReply(reply, args.Evals, index)
	return nil
}

// Evaluate creates an evaluation of every job with an allocation running on the node and of
// every system job, so the scheduler looks at the node again. With none, nothing is written.
func (n *Node) Evaluate(args *structs.NodeEvaluateRequest, reply *structs.NodeUpdateResponse) error {
	if done, err := n.srv.forward("Node.Evaluate", args, reply); done {
		return err
	}
	if _, err := n.srv.authorizeNodeWrite(args.AuthToken); err != nil {
		return err
	}
	node, err := n.srv.nodeForWrite(args.NodeID)
	if err != nil {
		return err
	}
	t := now().UnixNano()
	evals, err := n.srv.nodeEvals(node, structs.NodeStatusDown, t)
	if err != nil {
		return err
	}
	system, err := n.srv.nodeEvals(node, structs.NodeStatusReady, t)
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
		if index, err = n.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
			return err
		}
	}
	n.fillReply(reply, evals, index)
	return nil
}
