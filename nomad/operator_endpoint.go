package nomad

import (
	"fmt"
	"net/http"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Operator is the operator's view of Raft and autopilot. The Raft routes need a management
// token and the autopilot routes operator read or write, as upstream's.
type Operator struct {
	srv *Server
}

// operatorRaftGetConfiguration lists the servers of the Raft configuration, named as gossip
// knows them.
var operatorRaftGetConfiguration = read("Operator.RaftGetConfiguration", spec[structs.RaftConfigurationRequest, structs.RaftConfigurationResponse]{
	Authorize: management[structs.RaftConfigurationRequest]("read the Raft configuration"),
	Serve: func(c *rpcCall, _ *structs.RaftConfigurationRequest, reply *structs.RaftConfigurationResponse) error {
		s := c.srv
		f := s.raft.GetConfiguration()
		if err := f.Error(); err != nil {
			return err
		}
		names := map[string]string{}
		for _, m := range s.regionServers() {
			names[m.ID] = m.Name
		}
		if _, ok := names[s.config.NodeID]; !ok {
			names[s.config.NodeID] = s.config.NodeName + "." + s.config.Region
		}
		leader := s.Leader()
		reply.Index = f.Index()
		for _, srv := range f.Configuration().Servers {
			name, ok := names[string(srv.ID)]
			if !ok {
				name = "(unknown)"
			}
			reply.Servers = append(reply.Servers, &structs.RaftServer{
				ID:           string(srv.ID),
				Node:         name,
				Address:      string(srv.Address),
				Leader:       string(srv.Address) == leader,
				Voter:        srv.Suffrage == raft.Voter,
				RaftProtocol: "3",
			})
		}
		return nil
	},
})

// operatorRaftRemovePeer removes a server from the Raft configuration by ID or address. It
// is the way out for a server that is gone but still counted in the quorum; a server that is
// still a gossip member is better removed with force-leave, which this does not replace.
var operatorRaftRemovePeer = write("Operator.RaftRemovePeer", spec[structs.RaftPeerRequest, structs.GenericResponse]{
	Authorize: management[structs.RaftPeerRequest]("remove a Raft peer"),
	Validate:  operatorRaftPeerNamed,
	Serve: func(c *rpcCall, req *structs.RaftPeerRequest, reply *structs.GenericResponse) error {
		found, err := operatorRaftPeer(c.srv, req)
		if err != nil {
			return err
		}
		future := c.srv.raft.RemoveServer(found.ID, 0, 0)
		if err := future.Error(); err != nil {
			return fmt.Errorf("removing Raft peer %s: %w", found.ID, err)
		}
		c.srv.logger.Warn("removed a Raft peer on an operator's request", "id", found.ID, "address", found.Address)
		reply.Index = future.Index()
		return nil
	},
})

// operatorAutopilotGetConfiguration answers the stored autopilot configuration, or the
// defaults.
var operatorAutopilotGetConfiguration = read("Operator.AutopilotGetConfiguration", spec[structs.AutopilotConfigRequest, structs.AutopilotConfigResponse]{
	Authorize: opsOperatorRead[structs.AutopilotConfigRequest]("operator read required"),
	Serve: func(c *rpcCall, req *structs.AutopilotConfigRequest, reply *structs.AutopilotConfigResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			index, conf, err := store.AutopilotConfig(ws)
			if err != nil {
				return 0, err
			}
			if conf == nil {
				conf = structs.DefaultAutopilotConfig()
			}
			reply.Config = conf
			return index, nil
		})
	},
})

// operatorAutopilotSetConfiguration stores an autopilot configuration through Raft; with CAS
// only if nothing changed it since the caller read ModifyIndex.
var operatorAutopilotSetConfiguration = write("Operator.AutopilotSetConfiguration", spec[structs.AutopilotSetConfigRequest, structs.AutopilotSetConfigResponse]{
	Authorize: opsOperatorWrite[structs.AutopilotSetConfigRequest]("operator write required"),
	Validate: func(req *structs.AutopilotSetConfigRequest) error {
		if req.Config.LastContactThreshold < 0 {
			return structs.BadRequest("LastContactThreshold must not be negative")
		}
		if req.Config.ServerStabilizationTime < 0 {
			return structs.BadRequest("ServerStabilizationTime must not be negative")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.AutopilotSetConfigRequest, reply *structs.AutopilotSetConfigResponse) error {
		req.Actor = c.actor
		index, resp, err := c.srv.raftApplyResponse(structs.AutopilotRequestType, req)
		reply.Index = index
		if err != nil {
			return err
		}
		updated, _ := resp.(bool)
		reply.Updated = updated
		return nil
	},
})

// operatorServerHealth reports every server's health as the leader sees it. Only the leader
// tracks it, so the call is declared a write: always forwarded to the leader, never answered
// stale, and refused by a server that lost the leadership on the way.
var operatorServerHealth = write("Operator.ServerHealth", spec[structs.OperatorHealthRequest, structs.OperatorHealthReply]{
	Authorize: opsOperatorRead[structs.OperatorHealthRequest]("operator read required"),
	Serve: func(c *rpcCall, _ *structs.OperatorHealthRequest, reply *structs.OperatorHealthReply) error {
		health, err := c.srv.autopilot.Health()
		if err != nil {
			return err
		}
		*reply = *health
		return nil
	},
})

// operatorRaftTransferLeadership hands leadership to another voter, named by its Raft ID or
// address, as /v1/operator/raft/transfer-leadership. It needs operator:write. The old leader
// stops leading when the transfer completes; callers see the new leader through
// /v1/status/leader.
var operatorRaftTransferLeadership = write("Operator.RaftTransferLeadership", spec[structs.RaftPeerRequest, structs.GenericResponse]{
	Authorize: opsOperatorWrite[structs.RaftPeerRequest]("operator:write required to transfer Raft leadership"),
	Validate:  operatorRaftPeerNamed,
	Serve: func(c *rpcCall, req *structs.RaftPeerRequest, _ *structs.GenericResponse) error {
		target, err := operatorRaftPeer(c.srv, req)
		if err != nil {
			return err
		}
		if target.Suffrage != raft.Voter {
			return structs.BadRequest("server %s is not a voter and cannot become leader", target.ID)
		}
		if _, leaderID := c.srv.raft.LeaderWithID(); leaderID == target.ID {
			return structs.BadRequest("server %s is already the leader", target.ID)
		}
		if err := c.srv.raft.LeadershipTransferToServer(target.ID, target.Address).Error(); err != nil {
			return fmt.Errorf("transferring leadership to %s: %w", target.ID, err)
		}
		c.srv.logger.Warn("transferred Raft leadership on an operator's request", "to_id", target.ID, "to_address", target.Address)
		return nil
	},
})

// operatorRaftPeerNamed refuses a peer request that names the server by both or neither of
// ID and address.
func operatorRaftPeerNamed(req *structs.RaftPeerRequest) error {
	if (req.ID == "") == (req.Address == "") {
		return structs.BadRequest("id or address: give exactly one of the two")
	}
	return nil
}

// operatorRaftPeer finds, on the leader, the server req names: a 404 when the Raft
// configuration has no such server.
func operatorRaftPeer(s *Server, req *structs.RaftPeerRequest) (raft.Server, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raft.Server{}, err
	}
	for _, srv := range f.Configuration().Servers {
		if (req.ID != "" && string(srv.ID) == req.ID) || (req.Address != "" && string(srv.Address) == req.Address) {
			return srv, nil
		}
	}
	if req.ID != "" {
		return raft.Server{}, structs.NewErrCode(http.StatusNotFound, "id %q was not found in the Raft configuration", req.ID)
	}
	return raft.Server{}, structs.NewErrCode(http.StatusNotFound, "address %q was not found in the Raft configuration", req.Address)
}

// RaftGetConfiguration lists the servers of the Raft configuration.
func (o *Operator) RaftGetConfiguration(args *structs.RaftConfigurationRequest, reply *structs.RaftConfigurationResponse) error {
	return operatorRaftGetConfiguration.Call(o.srv, args, reply)
}

// RaftRemovePeer removes a server from the Raft configuration by ID or address.
func (o *Operator) RaftRemovePeer(args *structs.RaftPeerRequest, reply *structs.GenericResponse) error {
	return operatorRaftRemovePeer.Call(o.srv, args, reply)
}

// AutopilotGetConfiguration returns the stored autopilot configuration, or the defaults.
func (o *Operator) AutopilotGetConfiguration(args *structs.AutopilotConfigRequest, reply *structs.AutopilotConfigResponse) error {
	return operatorAutopilotGetConfiguration.Call(o.srv, args, reply)
}

// AutopilotSetConfiguration stores an autopilot configuration.
func (o *Operator) AutopilotSetConfiguration(args *structs.AutopilotSetConfigRequest, reply *structs.AutopilotSetConfigResponse) error {
	return operatorAutopilotSetConfiguration.Call(o.srv, args, reply)
}

// ServerHealth reports every server's health as the leader sees it.
func (o *Operator) ServerHealth(args *structs.OperatorHealthRequest, reply *structs.OperatorHealthReply) error {
	return operatorServerHealth.Call(o.srv, args, reply)
}

// RaftTransferLeadership hands leadership to another voter.
func (o *Operator) RaftTransferLeadership(args *structs.RaftPeerRequest, reply *structs.GenericResponse) error {
	return operatorRaftTransferLeadership.Call(o.srv, args, reply)
}
