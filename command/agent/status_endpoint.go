package agent

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// rpcAddr turns a Raft address into the address clients know the server by. A dev agent's
// in-memory transport has a synthetic address ("inmem-…"); it is reported as the agent's
// advertised RPC address, as upstream reports host:port.
func (s *HTTPServer) rpcAddr(raftAddr string) string {
	if s.srv != nil && raftAddr != "" && raftAddr == s.srv.RaftAddr() {
		return s.agent.config.Advertise.RPC
	}
	return raftAddr
}

// status runs one of the Status rows, answered by the server the call reaches (the agent's
// own, or the one its client is connected to), as upstream's status routes answer.
func (s *HTTPServer) status(method string) (*structs.StatusResponse, error) {
	var reply structs.StatusResponse
	args := structs.StatusRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}
	if err := s.rpc.RPC(method, &args, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

func (s *HTTPServer) statusLeader(_ http.ResponseWriter, r *http.Request) (any, error) {
	reply, err := s.status("Status.Leader")
	if err != nil {
		return nil, err
	}
	// A -dev agent reports its leader once its own node is registered too (briefly waited
	// for), so that a script waiting for the leader and then running a job finds the node
	// ready instead of "No nodes were eligible".
	if c := s.agent.Client(); reply.Leader != "" && c != nil && s.agent.config.DevMode {
		t := time.NewTimer(2 * time.Second)
		select {
		case <-c.Registered():
		case <-t.C:
		case <-r.Context().Done():
		}
		t.Stop()
	}
	return s.rpcAddr(reply.Leader), nil
}

func (s *HTTPServer) statusPeers(_ http.ResponseWriter, _ *http.Request) (any, error) {
	reply, err := s.status("Status.Peers")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(reply.Peers))
	for _, p := range reply.Peers {
		out = append(out, s.rpcAddr(p))
	}
	return out, nil
}

// regions lists the regions of the servers in the gossip pool (all regions share one pool,
// as upstream's servers do), sorted; a server without gossip knows its own.
func (s *HTTPServer) regions(_ http.ResponseWriter, _ *http.Request) (any, error) {
	reply, err := s.status("Status.Regions")
	if err != nil {
		return nil, err
	}
	return reply.Regions, nil
}

func (s *HTTPServer) systemGC(w http.ResponseWriter, r *http.Request) (any, error) {
	args := writeRequest(r)
	return s.writeForIndex(w, "System.GarbageCollect", &args)
}

func (s *HTTPServer) systemReconcileSummaries(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ReconcileJobSummariesRequest{WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "System.ReconcileSummaries", &args)
}

// agentSelf reports the configuration, this member and a few stats, in the shape
// api.AgentSelf decodes. The configuration goes through JSON so that fields tagged `json:"-"`
// (the gossip key) stay out; plugin configuration is left out too, as it may hold
// credentials. It needs agent read.
func (s *HTTPServer) agentSelf(_ http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentRead}); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(s.agent.config)
	if err != nil {
		return nil, err
	}
	var config map[string]any
	if err := json.Unmarshal(raw, &config); err != nil {
		return nil, err
	}
	delete(config, "Plugins")

	clientStats := map[string]string{"enabled": strconv.FormatBool(s.agent.Client() != nil)}
	if c := s.agent.Client(); c != nil {
		// What `nomad node ... -self` reads to find this agent's node, as upstream.
		clientStats["node_id"] = c.NodeID()
	}
	if rs := s.agent.rpcServers; rs != nil {
		clientStats["known_servers"] = strings.Join(rs.Servers(), ",")
		clientStats["connected_server"] = rs.Current()
	}
	if s.srv == nil {
		// A client-only agent: no server stats, as upstream's client agents report none.
		return &api.AgentSelf{
			Config: config,
			Member: *s.member(),
			Stats:  map[string]map[string]string{"client": clientStats},
		}, nil
	}
	leader := s.rpcAddr(s.srv.Leader())
	return &api.AgentSelf{
		Config: config,
		Member: *s.member(),
		Stats: map[string]map[string]string{
			"nomad": {
				"server":        "true",
				"leader":        strconv.FormatBool(s.srv.IsLeader()),
				"leader_addr":   leader,
				"known_regions": strconv.Itoa(len(s.srv.Regions())),
				"bootstrap":     strconv.FormatBool(s.agent.config.Server.BootstrapExpect == 1),
			},
			"client": clientStats,
		},
	}, nil
}
