package nomad

import (
	"context"
	"crypto/subtle"
	"sync"
	"time"

	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/structs"
)

// heartbeats are the leader's deadlines for the nodes' next heartbeat. They live in memory on
// the leader only: a heartbeat that changes nothing is not a Raft write. A new leader gives
// every node a full TTL to find it.
type heartbeats struct {
	mu        sync.Mutex
	deadlines map[string]time.Time
}

func newHeartbeats() *heartbeats { return &heartbeats{deadlines: map[string]time.Time{}} }

// heartbeatTTL is how often clients are told to heartbeat.
func (s *Server) heartbeatTTL() time.Duration {
	return positive(s.config.MinHeartbeatTTL, 10*time.Second)
}

// resetHeartbeat gives the node until TTL plus grace to send its next heartbeat and returns
// the TTL to tell it.
func (s *Server) resetHeartbeat(nodeID string) time.Duration {
	ttl := s.heartbeatTTL()
	s.heartbeats.mu.Lock()
	s.heartbeats.deadlines[nodeID] = time.Now().Add(ttl + s.config.HeartbeatGrace)
	s.heartbeats.mu.Unlock()
	return ttl
}

func (s *Server) clearHeartbeat(nodeID string) {
	s.heartbeats.mu.Lock()
	delete(s.heartbeats.deadlines, nodeID)
	s.heartbeats.mu.Unlock()
}

// runHeartbeats marks nodes down when their heartbeat is overdue, while this server leads.
func (s *Server) runHeartbeats(ctx context.Context) {
	nodes, err := s.State().Nodes(nil, "")
	if err != nil {
		s.logger.Error("reading nodes for heartbeat tracking failed", "error", err)
	}
	for _, n := range nodes {
		if n.Status != structs.NodeStatusDown {
			s.resetHeartbeat(n.ID)
		}
	}
	tick := time.NewTicker(min(time.Second, s.heartbeatTTL()/2))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-tick.C:
			var expired []string
			s.heartbeats.mu.Lock()
			for id, deadline := range s.heartbeats.deadlines {
				if t.After(deadline) {
					expired = append(expired, id)
				}
			}
			s.heartbeats.mu.Unlock()
			for _, id := range expired {
				if err := s.markNodeDown(id); err != nil {
					s.logger.Error("marking node down failed", "node_id", id, "error", err)
					continue
				}
				s.clearHeartbeat(id)
			}
		}
	}
}

// markNodeDown writes a missed-heartbeat node's down status, which makes its unfinished
// allocations lost, with evaluations for their jobs so the scheduler replaces them; or its
// disconnected status (missedHeartbeatStatus), which makes those of groups with a disconnect
// lost_after unknown instead. A node already down or disconnected is left as it is.
func (s *Server) markNodeDown(nodeID string) error {
	store := s.State()
	node, err := store.NodeByID(nil, nodeID)
	if err != nil || node == nil || node.Status == structs.NodeStatusDown || node.Status == structs.NodeStatusDisconnected {
		return err
	}
	status, err := s.missedHeartbeatStatus(nodeID)
	if err != nil {
		return err
	}
	t := now()
	evals, err := s.nodeEvals(node, status, t.UnixNano())
	if err != nil {
		return err
	}
	s.logger.Warn("node missed its heartbeat: marking it "+status, "node_id", nodeID, "node_name", node.Name)
	_, err = s.raftApply(structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
		NodeID: nodeID, Status: status, UpdatedAt: t.UnixNano(), Evals: evals,
	})
	return err
}

// missedHeartbeatStatus is the status a node that missed its heartbeat takes: disconnected
// when one of its running allocations belongs to a group with a disconnect lost_after (or
// max_client_disconnect), whose allocations then wait as unknown for it to come back; down
// otherwise.
func (s *Server) missedHeartbeatStatus(nodeID string) (string, error) {
	allocs, err := s.State().AllocsByNode(nil, nodeID)
	if err != nil {
		return "", err
	}
	for _, a := range allocs {
		if a.ClientTerminalStatus() || a.DesiredStatus != structs.AllocDesiredStatusRun || a.Job == nil {
			continue
		}
		if structs.DisconnectFor(a.Job.LookupTaskGroup(a.TaskGroup)).LostAfter > 0 {
			return structs.NodeStatusDisconnected, nil
		}
	}
	return structs.NodeStatusDown, nil
}

// nodeEvals builds the evaluations a node's status change needs: for a node going down, one
// per job with allocations the node had not finished; for a node becoming ready, one per
// system job, so that it gets their allocations.
func (s *Server) nodeEvals(node *structs.Node, status string, nowNanos int64) ([]*structs.Evaluation, error) {
	store := s.State()
	var jobs []*structs.Job
	seen := map[structs.NamespacedID]bool{}
	switch status {
	case structs.NodeStatusDown, structs.NodeStatusDisconnected:
		allocs, err := store.AllocsByNode(nil, node.ID)
		if err != nil {
			return nil, err
		}
		for _, a := range allocs {
			id := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
			if a.ClientTerminalStatus() || seen[id] {
				continue
			}
			seen[id] = true
			job, err := store.JobByID(nil, a.Namespace, a.JobID)
			if err != nil {
				return nil, err
			}
			if job == nil {
				job = a.Job
			}
			if job != nil {
				jobs = append(jobs, job)
			}
		}
	case structs.NodeStatusReady:
		all, err := store.Jobs(nil, structs.AllNamespacesSentinel, "")
		if err != nil {
			return nil, err
		}
		for _, job := range all {
			if (job.Type == structs.JobTypeSystem || job.Type == structs.JobTypeSysBatch) && !job.Stop {
				jobs = append(jobs, job)
			}
		}
	}
	var evals []*structs.Evaluation
	for _, job := range jobs {
		eval, err := worker.NewEval(job, structs.EvalTriggerNodeUpdate, 0, nowNanos)
		if err != nil {
			return nil, err
		}
		eval.NodeID = node.ID
		eval.NodeModifyIndex = node.ModifyIndex
		evals = append(evals, eval)
	}
	return evals, nil
}

// localNodeSecrets are the secrets of the nodes the client in this agent's process
// registered. A call carrying one is the local client's, trusted like the agent itself.
type localNodeSecrets struct {
	mu      sync.Mutex
	secrets []string
}

// TrustLocalNode records the secret of the node run by this agent's own client, before its
// first registration. It is not an RPC method: only code in this process can call it.
func (s *Server) TrustLocalNode(secret string) {
	if secret == "" {
		return
	}
	s.localNodes.mu.Lock()
	defer s.localNodes.mu.Unlock()
	s.localNodes.secrets = append(s.localNodes.secrets, secret)
}

func (s *Server) isLocalNodeSecret(secret string) bool {
	s.localNodes.mu.Lock()
	defer s.localNodes.mu.Unlock()
	found := false
	for _, known := range s.localNodes.secrets {
		if subtle.ConstantTimeCompare([]byte(known), []byte(secret)) == 1 {
			found = true
		}
	}
	return found
}
