package nomad

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/structs"
)

// ServerInfo identifies a server to its peers: its Raft ID and the address of its RPC port.
type ServerInfo struct {
	ID   string
	Addr string
}

// HelloRequest introduces a server and the servers it knows of.
type HelloRequest struct {
	Server ServerInfo
	Known  []ServerInfo
}

// HelloResponse answers with the servers the callee knows of and whether a cluster exists.
type HelloResponse struct {
	Server       ServerInfo
	Known        []ServerInfo
	Leader       string
	Bootstrapped bool
}

// JoinRequest asks the leader to add a server as a voter.
type JoinRequest struct {
	Server ServerInfo
}

// Cluster is the server-to-server endpoint that forms and grows the Raft cluster. It is only
// reachable on the RPC port, never over HTTP.
type Cluster struct {
	srv *Server
}

// Hello records the caller and answers with what this server knows.
func (c *Cluster) Hello(args *HelloRequest, reply *HelloResponse) error {
	c.srv.cluster.learn(append(args.Known, args.Server)...)
	reply.Server = c.srv.cluster.self()
	reply.Known = c.srv.cluster.known()
	reply.Leader = c.srv.Leader()
	reply.Bootstrapped = c.srv.cluster.hasConfiguration()
	return nil
}

// Join adds the caller to the Raft configuration; followers forward it to the leader.
func (c *Cluster) Join(args *JoinRequest, reply *structs.GenericResponse) error {
	if done, err := c.srv.forward("Cluster.Join", args, reply); done {
		return err
	}
	if args.Server.ID == "" || args.Server.Addr == "" {
		return structs.BadRequest("join needs a server ID and address")
	}
	return c.srv.AddPeer(args.Server.ID, args.Server.Addr)
}

// clusterJoin forms the cluster: with bootstrap_expect N, every server bootstraps Raft with
// the same N servers once it has learned of N (raft allows identical bootstrap configurations
// on all servers); a server that finds an existing cluster asks its leader to add it.
type clusterJoin struct {
	srv   *Server
	mu    sync.Mutex
	peers map[string]string
}

func newClusterJoin(s *Server) *clusterJoin { return &clusterJoin{srv: s, peers: map[string]string{}} }

func (j *clusterJoin) self() ServerInfo {
	return ServerInfo{ID: j.srv.config.NodeID, Addr: j.srv.RaftAddr()}
}

func (j *clusterJoin) learn(servers ...ServerInfo) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, s := range servers {
		if s.ID != "" && s.Addr != "" {
			j.peers[s.ID] = s.Addr
		}
	}
}

func (j *clusterJoin) known() []ServerInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]ServerInfo, 0, len(j.peers))
	for id, addr := range j.peers {
		out = append(out, ServerInfo{ID: id, Addr: addr})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

func (j *clusterJoin) hasConfiguration() bool {
	f := j.srv.raft.GetConfiguration()
	return f.Error() == nil && len(f.Configuration().Servers) > 0
}

// joinInterval is how often a server that is not yet in a cluster retries its join addresses.
const joinInterval = 500 * time.Millisecond

func (j *clusterJoin) run(ctx context.Context) {
	j.learn(j.self())
	t := time.NewTicker(joinInterval)
	defer t.Stop()
	for {
		if j.hasConfiguration() {
			return
		}
		if j.attempt() {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// attempt greets every join address once; it reports whether this server is now part of a
// cluster (bootstrapped or added by a leader).
func (j *clusterJoin) attempt() bool {
	me := j.self()
	for _, addr := range j.srv.config.RetryJoin {
		if addr == me.Addr {
			continue
		}
		var resp HelloResponse
		if err := j.srv.rpcCall(addr, "Cluster.Hello", &HelloRequest{Server: me, Known: j.known()}, &resp); err != nil {
			j.srv.logger.Debug("join attempt failed", "address", addr, "error", err)
			continue
		}
		j.learn(append(resp.Known, resp.Server)...)
		if resp.Bootstrapped && resp.Leader != "" {
			var gr structs.GenericResponse
			if err := j.srv.rpcCall(resp.Leader, "Cluster.Join", &JoinRequest{Server: me}, &gr); err != nil {
				j.srv.logger.Warn("asking the leader to add this server failed", "leader", resp.Leader, "error", err)
				continue
			}
			j.srv.logger.Info("joined the cluster", "leader", resp.Leader)
			return true
		}
	}
	expect := j.srv.config.BootstrapExpect
	known := j.known()
	if expect <= 1 || len(known) < expect {
		return false
	}
	servers := make([]raft.Server, 0, expect)
	for _, s := range known[:expect] {
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(s.ID), Address: raft.ServerAddress(s.Addr)})
	}
	err := j.srv.raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error()
	if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		j.srv.logger.Error("bootstrapping the cluster failed", "error", err)
		return false
	}
	j.srv.logger.Info("bootstrapped the cluster", "servers", len(servers))
	return true
}
