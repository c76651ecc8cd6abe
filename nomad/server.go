package nomad

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nomadfork/nomad/nomad/autopilot"
	"github.com/nomadfork/nomad/nomad/evalfeed"
	"github.com/nomadfork/nomad/nomad/fsm"
	"github.com/nomadfork/nomad/nomad/gossip"
	"github.com/nomadfork/nomad/nomad/leader"
	"github.com/nomadfork/nomad/nomad/transport"
	"github.com/nomadfork/nomad/nomad/worker"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-uuid"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/nomad/evalbroker"
	"github.com/nomadfork/nomad/nomad/serverauth"
	"github.com/nomadfork/nomad/nomad/stream"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Server is one Nomad server: Raft, the FSM and state store, the RPC endpoints and the
// leader's duties.
type Server struct {
	// workers is the scheduling workers' runtime configuration.
	workers *worker.Pool
	// evalBroker holds the evaluations waiting for a worker; enabled only while leading.
	evalBroker *evalbroker.Broker
	// evalFeed fills the broker from the state and fails what it gives up on.
	evalFeed *evalfeed.Feeder
	// leaderTerm counts the leadership terms this server started, so that a term winding
	// down does not disable the broker of the next.
	leaderTerm atomic.Uint64
	config     *Config
	logger     hclog.Logger
	// jobSizes remembers the encoded size of stored job versions for job_max_total_size.
	jobSizes jobSizeCache

	fsm       *fsm.FSM
	raft      *raft.Raft
	transport raft.Transport
	// logStore is the on-disk log and stable store, and disk the guard over data_dir's free
	// space; both nil without a data dir.
	logStore *diskLogStore
	disk     *diskGuard
	// diskHandOff guards diskHandOffAt, when leadership was last handed off for a full disk.
	diskHandOff   sync.Mutex
	diskHandOffAt time.Time
	// applied records how far the FSM got; nil without a data dir.
	applied  *raftutil.AppliedRecord
	raftAddr raft.ServerAddress

	// rpcListener serves Raft and server-to-server RPC on the RPC port; nil for a server
	// that keeps Raft in memory.
	rpcListener *transport.Listener
	clusterKey  *serverauth.Key
	rpcTLS      *transport.TLS
	raftStarted atomic.Bool

	// gossip is the gossip pool (nil without a serf address); membership makes Raft follow it.
	gossip     *gossip.Pool
	serfEvents chan serf.Event
	membership *membership
	autopilot  *autopilot.Autopilot

	broker   *stream.EventBroker
	aclCache *aclCache
	// aclRecheck re-checks open subscriptions after ACL writes; nil without a broker.
	aclRecheck *aclSubscriptionRecheck
	// rootKeys holds parsed root keys for signing and verifying workload identities.
	rootKeys rootKeyCache

	// varCiphers holds the variables AEAD of each root key (variables_encrypter.go).
	varCiphers variableCiphers
	varLocks   *variableLocks

	heartbeats *heartbeats
	localNodes *localNodeSecrets
	// introWarn spaces client introduction warnings (node_introduction.go).
	introWarn introWarnLimiter

	// clientSessions are the client agents connected to this server; localDialer reaches the
	// client of this server's own agent.
	clientSessions *clientSessionTable
	localDialer    *localNodeDialer
	// agentDial reaches this server's agent's debug routes for agent streams
	// (agent_stream.go); nil until the agent serves them.
	agentDial atomic.Pointer[func() (net.Conn, error)]

	// Endpoints are the RPC methods, called in-process by the HTTP agent.
	Endpoints *Endpoints

	// leaderReady is closed while this server leads and has applied the whole log.
	leaderReady *leader.Readiness

	shutdownCtx    context.Context
	shutdownCancel context.CancelFunc
	shutdownOnce   sync.Once
	leaderWG       sync.WaitGroup
}

// Endpoints groups the RPC endpoints by resource.
type Endpoints struct {
	Job         *Job
	Eval        *Eval
	Namespace   *Namespace
	Status      *Status
	ACL         *ACL
	Event       *Event
	PurgeRecord *PurgeHistory
	System      *System
	Node        *Node
	Alloc       *Alloc
	Keyring     *Keyring
	Deployment  *Deployment
	Variables   *Variables
	NodePool    *NodePool
	Search      *Search
	Scaling     *Scaling
	Operator    *Operator
	Volume      *Volume
	// Services is the ServiceRegistration endpoint.
	Services  *ServiceRegistration
	EventSink *EventSink
}

// NewServer starts a server. It returns once Raft is running; leadership follows shortly.
func NewServer(config *Config) (*Server, error) {
	if config.Logger == nil {
		config.Logger = hclog.NewNullLogger()
	}
	if config.NodeID == "" {
		id, err := loadOrCreateNodeID(config.DataDir)
		if err != nil {
			return nil, err
		}
		config.NodeID = id
	}
	config.ClientIntroduction = config.ClientIntroduction.withDefaults()
	if err := config.ClientIntroduction.Validate(); err != nil {
		return nil, err
	}
	key, err := clusterKey(config)
	if err != nil {
		return nil, err
	}
	rpcTLS, err := newRPCTLS(config)
	if err != nil {
		return nil, err
	}
	if joins := config.BootstrapExpect > 1 || len(config.RetryJoin) > 0; joins && config.RaftBindAddr != "" && config.SerfBindAddr == "" {
		return nil, errors.New("servers find each other through gossip: bootstrap_expect > 1 or retry_join needs a serf address (ports.serf)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		clusterKey:     key,
		rpcTLS:         rpcTLS,
		config:         config,
		logger:         config.Logger.Named("server"),
		shutdownCtx:    ctx,
		shutdownCancel: cancel,
	}
	if config.EnableEventBroker {
		s.broker = stream.NewEventBroker(ctx, stream.EventBrokerConfig{
			EventBufferSize: config.EventBufferSize,
			Logger:          s.logger.Named("events"),
		})
		s.aclRecheck = newACLSubscriptionRecheck(func() {
			s.broker.CheckSubscriptionsAgainst(s.subscriptionAllowed)
		})
	}
	for _, w := range transportWarnings(config) {
		s.logger.Warn(w)
	}
	s.aclCache = newACLCache()
	s.varLocks = newVariableLocks()
	s.leaderReady = leader.NewReadiness()
	s.heartbeats = newHeartbeats()
	s.localNodes = &localNodeSecrets{}
	s.clientSessions = newClientSessionTable()
	s.localDialer = &localNodeDialer{dials: map[string]func() (net.Conn, error){}}
	machine, err := fsm.NewFSM(s.logger.Named("fsm"), state.Config{JobTrackedVersions: config.JobTrackedVersions}, s.onCommit)
	if err != nil {
		cancel()
		return nil, err
	}
	s.fsm = machine
	if s.broker != nil {
		s.fsm.SetRestoreHook(s.broker.MarkUnpublishedThrough)
	}
	s.workers = worker.NewPool(config.NumSchedulers)
	s.evalBroker = evalbroker.New(config.EvalBroker)
	s.evalFeed = s.newEvalFeed()
	s.Endpoints = &Endpoints{
		Job:         &Job{srv: s},
		Eval:        &Eval{srv: s},
		Namespace:   &Namespace{srv: s},
		Status:      &Status{srv: s},
		ACL:         &ACL{srv: s},
		Event:       &Event{srv: s},
		EventSink:   &EventSink{srv: s},
		PurgeRecord: &PurgeHistory{srv: s},
		System:      &System{srv: s},
		Node:        &Node{srv: s},
		Alloc:       &Alloc{srv: s},
		Keyring:     &Keyring{srv: s},
		Deployment:  &Deployment{srv: s},
		Variables:   &Variables{srv: s},
		NodePool:    &NodePool{srv: s},
		Search:      &Search{srv: s},
		Scaling:     &Scaling{srv: s},
		Operator:    &Operator{srv: s},
		Volume:      &Volume{srv: s},
		Services:    &ServiceRegistration{srv: s},
	}
	s.membership = newMembership(s)
	s.autopilot = autopilot.New(autopilotBackend{s})
	s.serfEvents = make(chan serf.Event, serfEventBuffer)
	if err := s.setupRaft(); err != nil {
		cancel()
		s.closeRaftResources()
		return nil, err
	}
	if err := s.setupSerf(); err != nil {
		cancel()
		_ = s.raft.Shutdown().Error()
		s.closeRaftResources()
		return nil, err
	}
	s.leaderWG.Add(1)
	go s.monitorLeadership()
	if s.aclRecheck != nil {
		// Started after Raft: re-checks the log replay asked for wait here until now.
		s.leaderWG.Add(1)
		go func() {
			defer s.leaderWG.Done()
			s.aclRecheck.run(ctx)
		}()
	}
	if s.disk != nil {
		s.leaderWG.Add(1)
		go func() {
			defer s.leaderWG.Done()
			s.disk.runMetrics(ctx)
		}()
	}
	if s.gossip != nil {
		s.leaderWG.Add(2)
		go s.runSerfEvents(ctx)
		go s.membership.run(ctx)
		if len(s.config.RetryJoin) > 0 {
			s.leaderWG.Add(1)
			go s.runRetryJoin(ctx)
		}
	}
	return s, nil
}

// clusterKey parses the cluster key and refuses a configuration that would have servers talk
// to each other unauthenticated: joining other servers needs the key or TLS (whose
// certificates authenticate servers instead).
func clusterKey(config *Config) (*serverauth.Key, error) {
	joins := config.BootstrapExpect > 1 || len(config.RetryJoin) > 0
	if config.EncryptKey == "" {
		if joins && config.RaftBindAddr != "" && config.TLS == nil {
			return nil, errors.New("server.encrypt is required when servers join each other (bootstrap_expect > 1 or retry_join) without tls { rpc = true }: " +
				"servers authenticate each other with it before any Raft or RPC traffic; generate one with `openssl rand -base64 32`")
		}
		return nil, nil
	}
	return serverauth.ParseKey(config.EncryptKey)
}

func loadOrCreateNodeID(dataDir string) (string, error) {
	if dataDir == "" {
		return uuid.GenerateUUID()
	}
	path := filepath.Join(dataDir, "server", "node-id")
	if raw, err := os.ReadFile(path); err == nil {
		return string(raw), nil
	}
	id, err := uuid.GenerateUUID()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("creating server data dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(id), 0o600); err != nil {
		return "", fmt.Errorf("writing node id: %w", err)
	}
	return id, nil
}

func (s *Server) setupRaft() error {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(s.config.NodeID)
	rc.Logger = s.logger.Named("raft")
	rc.SnapshotThreshold = 8192
	rc.TrailingLogs = 10240
	if s.config.RaftSnapshotThreshold > 0 {
		rc.SnapshotThreshold = s.config.RaftSnapshotThreshold
	}
	if s.config.RaftSnapshotInterval > 0 {
		rc.SnapshotInterval = s.config.RaftSnapshotInterval
	}
	if s.config.RaftTrailingLogs > 0 {
		rc.TrailingLogs = s.config.RaftTrailingLogs
	}
	if s.config.FastRaft {
		rc.HeartbeatTimeout = 100 * time.Millisecond
		rc.ElectionTimeout = 100 * time.Millisecond
		rc.LeaderLeaseTimeout = 100 * time.Millisecond
		rc.CommitTimeout = 5 * time.Millisecond
	}

	var logs raft.LogStore
	var stable raft.StableStore
	var snaps raft.SnapshotStore
	var raftFSM raft.FSM = s.fsm
	if s.config.DataDir == "" {
		mem := raft.NewInmemStore()
		logs, stable = mem, mem
		snaps = raft.NewInmemSnapshotStore()
	} else {
		var err error
		if snaps, raftFSM, err = s.openDiskRaft(); err != nil {
			return err
		}
		logs, stable = s.logStore, s.logStore
	}

	if s.config.RaftBindAddr == "" {
		addr, trans := raft.NewInmemTransport(raft.ServerAddress("inmem-" + s.config.NodeID))
		s.transport, s.raftAddr = trans, addr
	} else {
		advertise := s.config.RaftAdvertiseAddr
		if advertise == "" {
			advertise = s.config.RaftBindAddr
		}
		adv, err := net.ResolveTCPAddr("tcp", advertise)
		if err != nil {
			return fmt.Errorf("resolving raft advertise address %q: %w", advertise, err)
		}
		limits := transport.Limits{MaxConnsPerClient: s.config.RPCMaxConnsPerClient, HandshakeTimeout: s.config.RPCHandshakeTimeout}
		ln, err := transport.Listen(s.config.RaftBindAddr, s.clusterKey, s.rpcTLS, limits, s.logger.Named("rpc"), s.serveRPC, s.serveClientConn)
		if err != nil {
			return fmt.Errorf("listening on RPC address %s: %w", s.config.RaftBindAddr, err)
		}
		s.rpcListener = ln
		trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream:  ln.RaftLayer(adv),
			MaxPool: 3,
			Timeout: 10 * time.Second,
			Logger:  s.logger.Named("raft-net"),
		})
		s.transport, s.raftAddr = raft.Transport(unpipelinedTransport{trans}), trans.LocalAddr()
		if s.config.raftPipelining {
			s.transport = trans
		}
	}

	existing, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return fmt.Errorf("reading raft state: %w", err)
	}
	// bootstrap_expect = 1 is a cluster of one; 0 without join addresses is the same for
	// convenience; 0 with join addresses only ever joins an existing cluster.
	selfBootstrap := s.config.BootstrapExpect == 1 || (s.config.BootstrapExpect == 0 && len(s.config.RetryJoin) == 0)
	if !existing && selfBootstrap {
		cfg := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: s.raftAddr}}}
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, s.transport, cfg); err != nil {
			return fmt.Errorf("bootstrapping raft: %w", err)
		}
	}
	if err := s.recoverPeers(rc, logs, stable, snaps); err != nil {
		return err
	}
	r, err := raft.NewRaft(rc, raftFSM, logs, stable, snaps, s.transport)
	if err != nil {
		return fmt.Errorf("starting raft: %w", err)
	}
	s.raft = r
	s.raftStarted.Store(true)
	return nil
}

// refuseDamagedLog is the one error a server with a damaged log starts with: what is wrong,
// where, and the commands that inspect and repair it.
func refuseDamagedLog(dataDir string, err error) error {
	return fmt.Errorf("refusing to start: %w; inspect the log with 'nomad operator raft logs -verify %s' and see \"Recovering a damaged data dir\" in the README", err, dataDir)
}

func (s *Server) closeWAL() {
	if s.logStore != nil {
		s.logStore.Close()
		s.logStore = nil
	}
	if s.applied != nil {
		if err := s.applied.Close(); err != nil {
			s.logger.Error("could not sync the record of the last applied index", "file", s.applied.Path(), "error", err)
		}
		s.applied = nil
	}
}

// State returns the current state store.
func (s *Server) State() *state.StateStore { return s.fsm.State() }

// Config returns the server's configuration.
func (s *Server) Config() *Config { return s.config }

// IsLeader reports whether this server leads the cluster.
func (s *Server) IsLeader() bool { return s.raft.State() == raft.Leader }

// Leader returns the leader's Raft address, or "" when there is none.
func (s *Server) Leader() string {
	addr, _ := s.raft.LeaderWithID()
	return string(addr)
}

// RaftAddr is the address other servers reach this one's Raft on.
func (s *Server) RaftAddr() string { return string(s.raftAddr) }

// Peers lists the Raft addresses of the voters.
func (s *Server) Peers() ([]string, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	var out []string
	for _, srv := range f.Configuration().Servers {
		out = append(out, string(srv.Address))
	}
	return out, nil
}

// AddPeer adds a voter; only the leader can.
func (s *Server) AddPeer(id, addr string) error {
	return s.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, 10*time.Second).Error()
}

// LastContact is how long since this server heard from the leader (0 on the leader).
func (s *Server) LastContact() time.Duration {
	if s.IsLeader() {
		return 0
	}
	last := s.raft.LastContact()
	if last.IsZero() {
		return 0
	}
	return time.Since(last)
}

// EventBroker returns the broker, nil when disabled.
func (s *Server) EventBroker() *stream.EventBroker { return s.broker }

// raftApplyTimeout bounds how long a write waits for commit.
const raftApplyTimeout = 30 * time.Second

// raftApply writes one entry and waits for it to be applied. A domain error returned by the FSM
// handler is returned as the error.
func (s *Server) raftApply(t structs.MessageType, msg any) (uint64, error) {
	index, _, err := s.raftApplyResponse(t, msg)
	return index, err
}

// raftApplyResponse is raftApply for the handlers that answer with a value (a CAS outcome).
func (s *Server) raftApplyResponse(t structs.MessageType, msg any) (uint64, any, error) {
	buf, err := s.encodeEntry(t, msg)
	if err != nil {
		return 0, nil, err
	}
	// Refused before Raft sees it: a write the log could not store would make the leader
	// step down, and a full disk would then keep it from leading at all.
	if s.disk != nil {
		if err := s.disk.checkWrite(); err != nil {
			s.handOffLeadershipForDisk()
			return 0, nil, err
		}
	}
	// The stamp travels with the entry to every FSM, which refuses an entry newer than it.
	future := s.raft.ApplyLog(raft.Log{Data: buf, Extensions: structs.EntryExtensions()}, raftApplyTimeout)
	if err := future.Error(); err != nil {
		return 0, nil, raftApplyError(err)
	}
	resp := future.Response()
	if err, ok := resp.(error); ok {
		return future.Index(), nil, err
	}
	return future.Index(), resp, nil
}

// raftApplyError tells a write raft refused from one whose fate is open. ErrNotLeader comes
// before the entry reaches the log: nothing was written, and "No cluster leader" is true.
// ErrLeadershipLost and ErrRaftShutdown can come after the entry was sent to the followers,
// and the next leader commits what a majority holds: answering "No cluster leader" there
// told clients a write failed that was then applied (found by the Jepsen-style checker).
func raftApplyError(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader):
		return structs.NoLeader()
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrRaftShutdown):
		return structs.WriteOutcomeUnknown()
	}
	return err
}

// encodeEntry encodes msg and checks the entry the way every FSM will: an entry they cannot
// decode would make each of them panic on every start, so it is refused here, as the request's
// fault, before anything is written.
func (s *Server) encodeEntry(t structs.MessageType, msg any) ([]byte, error) {
	buf, err := structs.EncodeEntry(t, msg)
	if err != nil {
		return nil, structs.BadRequest("request cannot be stored: %v", err)
	}
	if len(buf) > structs.LogEntryMaxSize {
		return nil, structs.BadRequest("request cannot be stored: %s entry is %d bytes, above the log entry limit of %d bytes", t, len(buf), structs.LogEntryMaxSize)
	}
	if _, err := structs.CheckEntry(buf); err != nil {
		return nil, structs.BadRequest("request cannot be stored: %v", err)
	}
	return buf, nil
}

// checkLeader refuses writes on followers. Multi-server clusters forward at the HTTP agent.
func (s *Server) checkLeader() error {
	if s.IsLeader() {
		if !s.leaderReady.Ready() {
			return structs.NotReady()
		}
		return nil
	}
	if s.Leader() == "" {
		return s.noLeaderError()
	}
	// Writes that reach a follower are forwarded before this check; getting here means the
	// leadership moved during the call.
	return structs.NotLeader()
}

// noLeaderError says why there is no leader when this server knows: a full disk here (a
// server of one that cannot store its own election entry) is the disk's refusal, not "No
// cluster leader".
func (s *Server) noLeaderError() error {
	if s.disk != nil {
		if err := s.disk.checkWrite(); err != nil {
			return err
		}
	}
	return structs.NoLeader()
}

// WaitForLeader blocks until the cluster has a leader or ctx ends; when this server is that
// leader, until it has caught up and takes calls (it refuses them before).
func (s *Server) WaitForLeader(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if s.Leader() != "" && !s.catchingUp() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Shutdown stops the server; it is safe to call twice.
func (s *Server) Shutdown() error {
	var err error
	s.shutdownOnce.Do(func() {
		s.shutdownCancel()
		// Without a leave: the others see this server fail, and autopilot decides.
		_ = s.gossip.Shutdown()
		if s.raft != nil {
			err = s.raft.Shutdown().Error()
		}
		s.leaderWG.Wait()
		s.closeRaftResources()
	})
	return err
}

// closeRaftResources releases the transport, the RPC listener and the log's files (and its
// lock), on shutdown and when a start fails half-way.
func (s *Server) closeRaftResources() {
	if closer, ok := s.transport.(interface{ Close() error }); ok {
		_ = closer.Close()
	} else if s.rpcListener != nil {
		_ = s.rpcListener.Close()
	}
	s.closeWAL()
}

// queryMeta fills the read metadata every response carries.
func (s *Server) setQueryMeta(m *structs.QueryMeta) {
	m.KnownLeader = s.Leader() != ""
	m.LastContact = s.LastContact()
}
