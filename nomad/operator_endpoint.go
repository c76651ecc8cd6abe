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

// RaftGetConfiguration lists the servers of the Raft configuration, named as gossip knows
// them.
func (o *Operator) RaftGetConfiguration(args *structs.RaftConfigurationRequest, reply *structs.RaftConfigurationResponse) error {
	if done, err := o.srv.forwardRead("Operator.RaftGetConfiguration", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := o.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() && !aclObj.IsDisabled() {
		return structs.PermissionDenied("management token required to read the Raft configuration")
	}
	f := o.srv.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	names := map[string]string{}
	for _, m := range o.srv.regionServers() {
		names[m.ID] = m.Name
	}
	if _, ok := names[o.srv.config.NodeID]; !ok {
		names[o.srv.config.NodeID] = o.srv.config.NodeName + "." + o.srv.config.Region
	}
	leader := o.srv.Leader()
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
}

// RaftRemovePeer removes a server from the Raft configuration by ID or address. It is the
// way out for a server that is gone but still counted in the quorum; a server that is still a
// gossip member is better removed with force-leave, which this does not replace.
func (o *Operator) RaftRemovePeer(args *structs.RaftPeerRequest, reply *structs.GenericResponse) error {
	if done, err := o.srv.forward("Operator.RaftRemovePeer", args, reply); done {
		return err
	}
	aclObj, _, err := o.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() && !aclObj.IsDisabled() {
		return structs.PermissionDenied("management token required to remove a Raft peer")
	}
	found, err := o.raftPeer(args)
	if err != nil {
		return err
	}
	future := o.srv.raft.RemoveServer(found.ID, 0, 0)
	if err := future.Error(); err != nil {
		return fmt.Errorf("removing Raft peer %s: %w", found.ID, err)
	}
	o.srv.logger.Warn("removed a Raft peer on an operator's request", "id", found.ID, "address", found.Address)
	reply.Index = future.Index()
	return nil
}

// AutopilotGetConfiguration returns the stored autopilot configuration, or the defaults.
func (o *Operator) AutopilotGetConfiguration(args *structs.AutopilotConfigRequest, reply *structs.AutopilotConfigResponse) error {
	if done, err := o.srv.forwardRead("Operator.AutopilotGetConfiguration", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := o.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowOperatorRead() {
		return structs.PermissionDenied("operator read required")
	}
	return o.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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
}

// AutopilotSetConfiguration stores an autopilot configuration through Raft; with CAS only if
// nothing changed it since the caller read ModifyIndex.
func (o *Operator) AutopilotSetConfiguration(args *structs.AutopilotSetConfigRequest, reply *structs.AutopilotSetConfigResponse) error {
	if done, err := o.srv.forward("Operator.AutopilotSetConfiguration", args, reply); done {
		return err
	}
	aclObj, actor, err := o.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowOperatorWrite() {
		return structs.PermissionDenied("operator write required")
	}
	if args.Config.LastContactThreshold < 0 {
		return structs.BadRequest("LastContactThreshold must not be negative")
	}
	if args.Config.ServerStabilizationTime < 0 {
		return structs.BadRequest("ServerStabilizationTime must not be negative")
	}
	if err := o.srv.checkLeader(); err != nil {
		return err
	}
	args.Actor = actor
	index, resp, err := o.srv.raftApplyResponse(structs.AutopilotRequestType, args)
	reply.Index = index
	if err != nil {
		return err
	}
	updated, _ := resp.(bool)
	reply.Updated = updated
	return nil
}

// ServerHealth reports every server's health as the leader sees it.
func (o *Operator) ServerHealth(args *structs.OperatorHealthRequest, reply *structs.OperatorHealthReply) error {
	if done, err := o.srv.forward("Operator.ServerHealth", args, reply); done {
		return err
	}
	aclObj, _, err := o.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowOperatorRead() {
		return structs.PermissionDenied("operator read required")
	}
	if err := o.srv.checkLeader(); err != nil {
		return err
	}
	health, err := o.srv.serverHealth()
	if err != nil {
		return err
	}
	*reply = *health
	return nil
}

// RaftTransferLeadership hands leadership to another voter, named by its Raft ID or address,
// as /v1/operator/raft/transfer-leadership. It needs operator:write. The old leader stops
// leading when the transfer completes; callers see the new leader through /v1/status/leader.
func (o *Operator) RaftTransferLeadership(args *structs.RaftPeerRequest, reply *structs.GenericResponse) error {
	if done, err := o.srv.forward("Operator.RaftTransferLeadership", args, reply); done {
		return err
	}
	aclObj, _, err := o.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.AllowOperatorWrite() {
		return structs.PermissionDenied("operator:write required to transfer Raft leadership")
	}
	target, err := o.raftPeer(args)
	if err != nil {
		return err
	}
	if target.Suffrage != raft.Voter {
		return structs.BadRequest("server %s is not a voter and cannot become leader", target.ID)
	}
	if _, leaderID := o.srv.raft.LeaderWithID(); leaderID == target.ID {
		return structs.BadRequest("server %s is already the leader", target.ID)
	}
	if err := o.srv.raft.LeadershipTransferToServer(target.ID, target.Address).Error(); err != nil {
		return fmt.Errorf("transferring leadership to %s: %w", target.ID, err)
	}
	o.srv.logger.Warn("transferred Raft leadership on an operator's request", "to_id", target.ID, "to_address", target.Address)
	return nil
}

// raftPeer finds, on the leader, the server args names by exactly one of ID and address: a
// 400 when it names both or neither, a 404 when the Raft configuration has no such server.
func (o *Operator) raftPeer(args *structs.RaftPeerRequest) (raft.Server, error) {
	if (args.ID == "") == (args.Address == "") {
		return raft.Server{}, structs.BadRequest("id or address: give exactly one of the two")
	}
	if err := o.srv.checkLeader(); err != nil {
		return raft.Server{}, err
	}
	f := o.srv.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return raft.Server{}, err
	}
	for _, srv := range f.Configuration().Servers {
		if (args.ID != "" && string(srv.ID) == args.ID) || (args.Address != "" && string(srv.Address) == args.Address) {
			return srv, nil
		}
	}
	if args.ID != "" {
		return raft.Server{}, structs.NewErrCode(http.StatusNotFound, "id %q was not found in the Raft configuration", args.ID)
	}
	return raft.Server{}, structs.NewErrCode(http.StatusNotFound, "address %q was not found in the Raft configuration", args.Address)
}
