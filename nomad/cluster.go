package nomad

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/nomad/gossip"
	"github.com/nomadfork/nomad/structs"
)

// ServerInfo identifies a server to its peers: its Raft ID and the address of its RPC port.
type ServerInfo struct {
	ID   string
	Addr string
}

// HelloRequest introduces a server.
type HelloRequest struct {
	Server ServerInfo
}

// HelloResponse answers with who the callee is and whether it already has a cluster.
type HelloResponse struct {
	Server       ServerInfo
	Leader       string
	Bootstrapped bool
}

// Cluster is the server-to-server endpoint that forms and grows the Raft cluster. It is only
// reachable on the RPC port, never over HTTP: a caller has proved the cluster key or a
// certificate from the CA before Hello is read, so an answer proves the same of the callee.
//
// Its methods are peer calls (peer_calls.go), not rows of the endpoint table: no token is
// involved (the transport's server role is the whole check, which a row's rule cannot see),
// and Hello and RaftStats must be answered by the server dialled, where a read row forwards
// to the leader.
type Cluster struct {
	srv *Server
}

// Hello answers with this server's ID and RPC address and whether it has a Raft
// configuration. The caller compares the ID with the one gossiped for the address it dialled.
func (c *Cluster) Hello(_ *HelloRequest, reply *HelloResponse) error {
	reply.Server = c.srv.self()
	reply.Leader = c.srv.Leader()
	reply.Bootstrapped = c.srv.hasConfiguration()
	return nil
}

func (s *Server) self() ServerInfo { return ServerInfo{ID: s.config.NodeID, Addr: s.RaftAddr()} }

func (s *Server) hasConfiguration() bool {
	f := s.raft.GetConfiguration()
	return f.Error() == nil && len(f.Configuration().Servers) > 0
}

// joinInterval is how often retry_join retries and how often the membership loop runs when
// nothing nudges it.
const joinInterval = 500 * time.Millisecond

// helloTimeout bounds one identity check of a gossiped server.
const helloTimeout = 5 * time.Second

// verifyServer calls Hello on m's RPC port. It succeeds only when the member authenticates
// there (the dialer proves and requires the key or the CA) and answers with the ID it
// gossiped: gossip alone, which anyone may speak when it is not encrypted, never vouches.
func (s *Server) verifyServer(m *gossip.Server) (*HelloResponse, error) {
	var resp HelloResponse
	if err := s.rpcCallTimeout(m.RPCAddr, "Cluster.Hello", &HelloRequest{Server: s.self()}, &resp, helloTimeout); err != nil {
		return nil, err
	}
	if resp.Server.ID != m.ID {
		return nil, fmt.Errorf("server at %s answered as %q, but gossip names it %q", m.RPCAddr, resp.Server.ID, m.ID)
	}
	return &resp, nil
}

// membership follows gossip: it bootstraps Raft once bootstrap_expect servers of the region
// are known and verified, and, on the leader, adds verified servers as voters and removes those
// that left.
type membership struct {
	srv    *Server
	wakeCh chan struct{}

	mu sync.Mutex
	// gone are members that left or were reaped, by server ID, waiting for the leader to
	// drop them from Raft.
	gone map[string]string
	// warned rate-limits the warning about a member that does not authenticate.
	warned map[string]time.Time
	// retryAt holds back the next identity check of a member whose last one failed (or that
	// gossip called gone but still answered), so it costs one dial per verifyBackoff, not one
	// per tick.
	retryAt map[string]time.Time
	// leftAt are servers removed because they asked to leave (Cluster.Leave): gossip may still
	// call one alive for a moment, and it still answers on its RPC port, so without this the
	// next reconcile would add it straight back.
	leftAt map[string]time.Time
}

// leaveTombstone is how long a server that left is not added back on gossip's word.
const leaveTombstone = 30 * time.Second

func (m *membership) markLeft(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leftAt == nil {
		m.leftAt = map[string]time.Time{}
	}
	m.leftAt[id] = time.Now()
}

func (m *membership) recentlyLeft(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.leftAt[id]
	if ok && time.Since(at) > leaveTombstone {
		delete(m.leftAt, id)
		return false
	}
	return ok
}

// verifyBackoff is the wait before checking again a member that did not authenticate.
const verifyBackoff = 5 * time.Second

func (m *membership) MayRetry(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return time.Now().After(m.retryAt[id])
}

func (m *membership) backoff(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retryAt[id] = time.Now().Add(verifyBackoff)
}

func newMembership(s *Server) *membership {
	return &membership{srv: s, wakeCh: make(chan struct{}, 1), gone: map[string]string{}, warned: map[string]time.Time{}, retryAt: map[string]time.Time{}}
}

func (m *membership) nudge() {
	select {
	case m.wakeCh <- struct{}{}:
	default:
	}
}

func (m *membership) noteGone(members []serf.Member) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, mem := range members {
		if p, ok := gossip.ParseServer(mem); ok && p.Region == m.srv.config.Region {
			m.gone[p.ID] = p.Name
		}
	}
}

func (m *membership) takeGone() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.gone
	m.gone = map[string]string{}
	return out
}

// WarnOnce logs a refusal for a member at most once a minute.
func (m *membership) WarnOnce(id string, msg string, args ...any) {
	m.mu.Lock()
	last, seen := m.warned[id]
	now := time.Now()
	if seen && now.Sub(last) < time.Minute {
		m.mu.Unlock()
		return
	}
	m.warned[id] = now
	m.mu.Unlock()
	m.srv.logger.Warn(msg, args...)
}

func (m *membership) run(ctx context.Context) {
	defer m.srv.leaderWG.Done()
	t := time.NewTicker(joinInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wakeCh:
		case <-t.C:
		}
		if !m.srv.hasConfiguration() {
			m.maybeBootstrap()
			continue
		}
		if m.srv.IsLeader() && m.srv.leaderCaughtUp() {
			m.reconcile(ctx)
		}
	}
}

// maybeBootstrap bootstraps Raft once bootstrap_expect servers of the region are alive in
// gossip, authenticate on their RPC port, agree on bootstrap_expect and have no cluster yet.
// A gossiped member that does not authenticate is left out (it could be anyone, when gossip is
// not encrypted) rather than allowed to hold the bootstrap up. Servers that see the same
// members bootstrap the same configuration, which raft accepts.
func (m *membership) maybeBootstrap() {
	s := m.srv
	expect := s.config.BootstrapExpect
	if expect <= 1 {
		return
	}
	var alive []*gossip.Server
	for _, p := range s.regionServers() {
		if p.Status == serf.StatusAlive {
			alive = append(alive, p)
		}
	}
	if len(alive) < expect {
		return
	}
	servers := make([]raft.Server, 0, len(alive))
	for _, p := range alive {
		addr := s.RaftAddr()
		if p.ID != s.config.NodeID {
			if !m.MayRetry(p.ID) {
				continue
			}
			resp, err := s.verifyServer(p)
			if err != nil {
				m.backoff(p.ID)
				m.WarnOnce(p.ID, "not bootstrapping with a gossiped server that does not authenticate on its RPC port", "server", p.Name, "error", err)
				continue
			}
			if resp.Bootstrapped {
				// A cluster exists: its leader adds this server.
				return
			}
			addr = resp.Server.Addr
		}
		if p.Expect != expect {
			m.WarnOnce(p.ID, "not bootstrapping: servers disagree on bootstrap_expect", "server", p.Name, "expect", p.Expect, "ours", expect)
			return
		}
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(addr)})
	}
	if len(servers) < expect {
		return
	}
	err := s.raft.BootstrapCluster(raft.Configuration{Servers: servers}).Error()
	if err != nil && !errors.Is(err, raft.ErrCantBootstrap) {
		s.logger.Error("bootstrapping the cluster failed", "error", err)
		return
	}
	s.logger.Info("bootstrapped the cluster", "servers", len(servers))
}

// reconcile makes the Raft configuration follow gossip, on the leader: an alive server of the
// region that authenticates is added (as a non-voter that autopilot promotes once stable); a
// server that left (or was reaped after force-leave) is removed; failed servers are
// autopilot's to clean up.
func (m *membership) reconcile(ctx context.Context) {
	s := m.srv
	f := s.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	inRaft := map[string]raft.Server{}
	for _, srv := range f.Configuration().Servers {
		inRaft[string(srv.ID)] = srv
	}
	for id, name := range m.takeGone() {
		srv, ok := inRaft[id]
		if !ok || id == s.config.NodeID {
			continue
		}
		if m.RemoveIfGone(id, name, string(srv.Address), "left") {
			delete(inRaft, id)
		}
	}
	for _, p := range s.regionServers() {
		if ctx.Err() != nil {
			return
		}
		if p.ID == s.config.NodeID {
			continue
		}
		switch p.Status {
		case serf.StatusLeft:
			if srv, ok := inRaft[p.ID]; ok && m.MayRetry(p.ID) {
				m.RemoveIfGone(p.ID, p.Name, string(srv.Address), "left")
			}
		case serf.StatusAlive:
			if _, ok := inRaft[p.ID]; ok || !m.MayRetry(p.ID) || m.recentlyLeft(p.ID) {
				continue
			}
			resp, err := s.verifyServer(p)
			if err != nil {
				m.backoff(p.ID)
				m.WarnOnce(p.ID, "not adding a gossiped server to Raft: it does not authenticate on its RPC port", "server", p.Name, "address", p.RPCAddr, "error", err)
				continue
			}
			// A newcomer votes only once it has been healthy for server_stabilization_time
			// (autopilot promotes it), so a server that flaps right after joining never
			// counts in the quorum.
			stabilize := s.autopilotConfig().ServerStabilizationTime > 0
			if stabilize {
				err = s.raft.AddNonvoter(raft.ServerID(p.ID), raft.ServerAddress(resp.Server.Addr), 0, 10*time.Second).Error()
			} else {
				err = s.AddPeer(p.ID, resp.Server.Addr)
			}
			if err != nil {
				s.logger.Error("adding a server to Raft failed", "server", p.Name, "error", err)
				continue
			}
			s.logger.Info("added a server to Raft", "server", p.Name, "address", resp.Server.Addr, "voter", !stabilize)
		}
	}
	s.autopilot.Cleanup()
	s.autopilot.Promote()
}

// RemoveIfGone removes a server from Raft on gossip's word that it left or failed, unless it
// still answers as itself on its RPC port (addr, from the Raft configuration). Gossip is not
// authenticated when it is not encrypted (a TLS-only cluster): a forged "left" or "dead" must
// not cost the quorum a live voter. A server leaving gracefully asks the leader over the RPC
// port instead (Cluster.Leave), so this check never holds it up.
func (m *membership) RemoveIfGone(id, name, addr, why string) bool {
	s := m.srv
	if s.answersAs(id, addr) {
		m.backoff(id)
		m.WarnOnce(id, "gossip says a server is gone but it answers on its RPC port; keeping it in Raft", "server", name, "gossip", why)
		return false
	}
	if err := s.raft.RemoveServer(raft.ServerID(id), 0, 0).Error(); err != nil {
		s.logger.Error("removing a server from Raft failed", "server", name, "gossip", why, "error", err)
		return false
	}
	s.logger.Info("removed a server from Raft", "server", name, "gossip", why)
	return true
}

// answersAs reports whether the server at addr authenticates and answers with id.
func (s *Server) answersAs(id, addr string) bool {
	var resp HelloResponse
	err := s.rpcCallTimeout(addr, "Cluster.Hello", &HelloRequest{Server: s.self()}, &resp, helloTimeout)
	return err == nil && resp.Server.ID == id
}

// LeaveRequest asks the leader to remove a server that is leaving gracefully.
type LeaveRequest struct {
	ID string
}

// Leave removes the server args.ID from Raft; followers forward it to the leader. Only
// servers reach it (the RPC port's authentication), the same trust that lets them speak Raft.
func (c *Cluster) Leave(args *LeaveRequest, reply *structs.GenericResponse) error {
	if done, err := c.srv.forward("Cluster.Leave", args, reply); done {
		return err
	}
	if args.ID == "" {
		return structs.BadRequest("leave needs the server's ID")
	}
	if err := c.srv.checkLeader(); err != nil {
		return err
	}
	c.srv.membership.markLeft(args.ID)
	future := c.srv.raft.RemoveServer(raft.ServerID(args.ID), 0, 0)
	if err := future.Error(); err != nil {
		return err
	}
	reply.Index = future.Index()
	c.srv.logger.Info("removed a server that is leaving", "id", args.ID)
	return nil
}
