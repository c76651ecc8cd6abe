package agent

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// The operator's Raft and autopilot routes. Bodies use api's types on the wire, whose JSON
// spells durations as strings ("200ms").

func (s *HTTPServer) operatorRaftConfiguration(_ http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.RaftConfigurationRequest{QueryOptions: queryOptions(r)}
	var reply structs.RaftConfigurationResponse
	if err := s.rpc.RPC("Operator.RaftGetConfiguration", &args, &reply); err != nil {
		return nil, err
	}
	out := &api.RaftConfiguration{Index: reply.Index, Servers: []*api.RaftServer{}}
	for _, srv := range reply.Servers {
		out.Servers = append(out.Servers, &api.RaftServer{
			ID: srv.ID, Node: srv.Node, Address: s.rpcAddr(srv.Address), Leader: srv.Leader, Voter: srv.Voter,
			RaftProtocol: srv.RaftProtocol,
		})
	}
	return out, nil
}

func (s *HTTPServer) operatorRaftRemovePeer(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	args := structs.RaftPeerRequest{ID: q.Get("id"), Address: q.Get("address"), WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "Operator.RaftRemovePeer", &args)
}

func (s *HTTPServer) operatorRaftTransferLeadership(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	args := structs.RaftPeerRequest{ID: q.Get("id"), Address: q.Get("address"), WriteRequest: writeRequest(r)}
	var reply structs.GenericResponse
	if err := s.rpc.RPC("Operator.RaftTransferLeadership", &args, &reply); err != nil {
		return nil, err
	}
	return nil, nil
}

func autopilotToAPI(c *structs.AutopilotConfig) *api.AutopilotConfiguration {
	return &api.AutopilotConfiguration{
		CleanupDeadServers:      c.CleanupDeadServers,
		LastContactThreshold:    c.LastContactThreshold,
		MaxTrailingLogs:         c.MaxTrailingLogs,
		MinQuorum:               c.MinQuorum,
		ServerStabilizationTime: c.ServerStabilizationTime,
		EnableRedundancyZones:   c.EnableRedundancyZones,
		DisableUpgradeMigration: c.DisableUpgradeMigration,
		EnableCustomUpgrades:    c.EnableCustomUpgrades,
		CreateIndex:             c.CreateIndex,
		ModifyIndex:             c.ModifyIndex,
	}
}

func (s *HTTPServer) operatorAutopilotGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.AutopilotConfigRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "Operator.AutopilotGetConfiguration", &args, func(reply *structs.AutopilotConfigResponse) (any, error) {
		return autopilotToAPI(reply.Config), nil
	})
}

// operatorAutopilotSet stores the body; ?cas=<index> makes it a check-and-set against the
// stored ModifyIndex. The answer is a bare boolean, as upstream's.
func (s *HTTPServer) operatorAutopilotSet(w http.ResponseWriter, r *http.Request) (any, error) {
	var body api.AutopilotConfiguration
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	args := structs.AutopilotSetConfigRequest{
		Config: structs.AutopilotConfig{
			CleanupDeadServers:      body.CleanupDeadServers,
			LastContactThreshold:    body.LastContactThreshold,
			MaxTrailingLogs:         body.MaxTrailingLogs,
			MinQuorum:               body.MinQuorum,
			ServerStabilizationTime: body.ServerStabilizationTime,
			EnableRedundancyZones:   body.EnableRedundancyZones,
			DisableUpgradeMigration: body.DisableUpgradeMigration,
			EnableCustomUpgrades:    body.EnableCustomUpgrades,
		},
		WriteRequest: writeRequest(r),
	}
	if v := r.URL.Query().Get("cas"); v != "" {
		index, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, structs.BadRequest("cas: %q is not an index", v)
		}
		args.CAS = true
		args.Config.ModifyIndex = index
	}
	return write(s, w, "Operator.AutopilotSetConfiguration", &args, func(reply *structs.AutopilotSetConfigResponse) (any, error) {
		return reply.Updated, nil
	})
}

// operatorAutopilotHealth answers 429 with the same body when a server is unhealthy, so a
// load balancer or script can check the status code alone, as upstream's.
// operatorHealthOut is upstream's health reply with, per server, our data_dir fields
// (omitted when empty, so a reply without a data dir matches upstream's exactly).
type operatorHealthOut struct {
	Healthy          bool
	FailureTolerance int
	Servers          []serverHealthOut
	Leader           string
	Voters           []string
}

type serverHealthOut struct {
	api.ServerHealth
	DataDirFreeBytes uint64 `json:",omitempty"`
	DiskWarning      string `json:",omitempty"`
}

// MarshalJSON adds our fields to api.ServerHealth's own encoding (which formats LastContact
// as upstream does); without it the embedded type's MarshalJSON would drop them.
func (h serverHealthOut) MarshalJSON() ([]byte, error) {
	base, err := json.Marshal(&h.ServerHealth)
	if err != nil || (h.DataDirFreeBytes == 0 && h.DiskWarning == "") {
		return base, err
	}
	extra, err := json.Marshal(struct {
		DataDirFreeBytes uint64 `json:",omitempty"`
		DiskWarning      string `json:",omitempty"`
	}{h.DataDirFreeBytes, h.DiskWarning})
	if err != nil {
		return nil, err
	}
	return append(append(base[:len(base)-1], ','), extra[1:]...), nil
}

func (s *HTTPServer) operatorAutopilotHealth(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.OperatorHealthRequest{QueryOptions: queryOptions(r)}
	var reply structs.OperatorHealthReply
	if err := s.rpc.RPC("Operator.ServerHealth", &args, &reply); err != nil {
		return nil, err
	}
	out := &operatorHealthOut{
		Healthy:          reply.Healthy,
		FailureTolerance: reply.FailureTolerance,
		Leader:           reply.Leader,
		Voters:           nonNil(reply.Voters),
		Servers:          []serverHealthOut{},
	}
	for _, h := range reply.Servers {
		out.Servers = append(out.Servers, serverHealthOut{ServerHealth: api.ServerHealth{
			ID: h.ID, Name: h.Name, Address: s.rpcAddr(h.Address), SerfStatus: h.SerfStatus, Version: h.Version,
			Leader: h.Leader, LastContact: h.LastContact, LastTerm: h.LastTerm, LastIndex: h.LastIndex,
			Healthy: h.Healthy, Voter: h.Voter, StableSince: h.StableSince,
		}, DataDirFreeBytes: h.DataDirFreeBytes, DiskWarning: h.DiskWarning})
	}
	if reply.Healthy {
		return out, nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	return nil, json.NewEncoder(w).Encode(out)
}
