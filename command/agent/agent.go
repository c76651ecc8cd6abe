package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadfork/nomad/nomad/transport"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/tlsutil"
)

// httpShutdownTimeout is how long shutdown waits for requests in flight before closing their
// connections.
const httpShutdownTimeout = 5 * time.Second

// Agent is one running `nomad agent`: a server, the HTTP API in front of it and, when enabled,
// a client that runs allocations on this machine through the agent's own server.
type Agent struct {
	config *Config
	logger hclog.Logger
	server *nomad.Server
	http   *HTTPServer
	client *client.Client
	// httpTLS holds the HTTPS certificate (tls.http); nil serves plain HTTP.
	httpTLS *tlsutil.Wrapper
	// metrics is the process's in-memory metrics sink (see setupMetrics).
	metrics *metrics.InmemSink
	// clientTLS is a client-only agent's certificate for the servers' RPC port (tls.rpc).
	clientTLS *transport.ClientTLS
	// rpcServers is the client's connection to the servers of a client-only agent.
	rpcServers *client.RPCServers
	// streamSrv serves what servers send to the client over streams (exec, logs).
	streamSrv *http.Server
	// monitors counts the /v1/agent/monitor streams this agent serves; each ends when its
	// caller (or the agent stream carrying it) goes away.
	monitors atomic.Int64
	// agentStreamSrv serves the debug routes other servers reach this server agent's data
	// through (agent_debug_forward.go); its goroutine is in streamWG too.
	agentStreamSrv *http.Server
	streamWG       sync.WaitGroup
	// tempAllocDir is the allocation directory of a client without a data dir; shutdown
	// removes it.
	tempAllocDir string
	// dataDirLock is the open lock file in data_dir (lockDataDir), held until shutdown.
	dataDirLock *os.File

	// ctx ends at shutdown; HTTP requests derive from it.
	ctx    context.Context
	cancel context.CancelFunc

	shutdownOnce sync.Once
}

// NewAgent starts the server and the HTTP listener described by cfg, which is taken as
// already merged and validated; NewAgent works on a copy. An HTTP port of 0 picks a free
// port (tests); HTTPAddr reports the one bound. It returns without waiting for a leader.
// /v1/agent/monitor needs logger to be an hclog.InterceptLogger; with any other it answers 501.
func NewAgent(cfg *Config, logger hclog.Logger) (*Agent, error) {
	if cfg == nil {
		return nil, errors.New("agent: no configuration")
	}
	cfg = cfg.Copy()
	cfg.NormalizeAddrs()
	serverEnabled := cfg.Server != nil && cfg.Server.Enabled
	clientEnabled := cfg.Client != nil && cfg.Client.Enabled
	if !serverEnabled && !clientEnabled {
		return nil, errors.New("this agent runs nothing: set server.enabled (-server), client.enabled (-client) or both")
	}
	if !serverEnabled && len(cfg.Client.Servers)+len(cfg.Client.RetryJoin) == 0 {
		return nil, errors.New("a client-only agent needs the servers' RPC addresses: set client.servers (-servers) or client.server_join.retry_join")
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	// Once per start, before anything runs: what the operator wrote and this build ignores.
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}

	// The files are checked before anything starts, so a bad one stops the agent with an
	// error that names it.
	var httpTLS *tlsutil.Wrapper
	if t := cfg.TLS; t != nil && t.EnableHTTP {
		w, err := tlsutil.New(tlsutil.Config{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, MinVersion: t.TLSMinVersion})
		if err != nil {
			return nil, err
		}
		httpTLS = w
	}

	var clientTLS *transport.ClientTLS
	if t := cfg.TLS; t != nil && t.EnableRPC && !serverEnabled {
		ct, err := transport.NewClientTLS(rpcTLSConfig(t), cfg.Region)
		if err != nil {
			return nil, err
		}
		clientTLS = ct
	}

	var dataDirLock *os.File
	if cfg.DataDir != "" {
		lock, err := lockDataDir(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		dataDirLock = lock
	}

	ctx, cancel := context.WithCancel(context.Background())
	a := &Agent{config: cfg, logger: logger, ctx: ctx, cancel: cancel, httpTLS: httpTLS, clientTLS: clientTLS, dataDirLock: dataDirLock}
	a.metrics = setupMetrics(cfg.Telemetry)

	if serverEnabled {
		srv, err := nomad.NewServer(serverConfig(cfg, logger))
		if err != nil {
			cancel()
			a.unlockDataDir()
			return nil, fmt.Errorf("starting server: %w", err)
		}
		a.server = srv
	}

	if !serverEnabled {
		// The client's connection to the servers exists before the HTTP API, which sends
		// every request over it.
		r, err := a.newRPCServers()
		if err != nil {
			cancel()
			a.unlockDataDir()
			return nil, err
		}
		a.rpcServers = r
	}

	addr := net.JoinHostPort(cfg.Addresses.HTTP, strconv.Itoa(cfg.Ports.HTTP))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		cancel()
		if a.server != nil {
			_ = a.server.Shutdown()
		}
		if a.rpcServers != nil {
			a.rpcServers.Close()
		}
		a.unlockDataDir()
		return nil, fmt.Errorf("starting HTTP listener on %s: %w", addr, err)
	}
	limited := limitHTTPListener(ln, cfg.Limits, httpTLS != nil, logger.Named("http"))
	ln = limited
	if httpTLS != nil {
		ln = tls.NewListener(ln, httpTLS.IncomingConfig(cfg.TLS.VerifyHTTPSClient))
	}
	a.http = newHTTPServer(a, ln)
	a.http.conns = limited.Limiter
	a.http.httpSrv.ConnState = limited.ConnState
	go a.http.serve()
	if a.server != nil {
		a.serveAgentStreams()
	}
	if clientEnabled {
		if err := a.startClient(); err != nil {
			a.Shutdown()
			return nil, fmt.Errorf("starting client: %w", err)
		}
	}
	return a, nil
}

// Build is the binary's version, set by main; servers gossip it in their "build" tag (the
// server's default when empty, as in tests).
var Build string

// buildVersion is Build, or the server's default when main did not set it; the node's
// nomad.version attribute reports it, as constraints and "node status -verbose" read it.
func buildVersion() string {
	if Build != "" {
		return Build
	}
	return nomad.DefaultConfig().Build
}

// serverConfig derives the server's configuration from the agent's.
func serverConfig(cfg *Config, logger hclog.Logger) *nomad.Config {
	sc := nomad.DefaultConfig()
	sc.NodeName = cfg.Name
	sc.Region = cfg.Region
	sc.Datacenter = cfg.Datacenter
	sc.DataDir = cfg.DataDir
	sc.Logger = logger
	if Build != "" {
		sc.Build = Build
	}

	server := cfg.Server
	sc.BootstrapExpect = server.BootstrapExpect
	// retry_join names gossip addresses, as upstream's does: the serf port is the default.
	sc.RetryJoin = joinAddrs(server.RetryJoin, cfg.Ports.Serf)
	sc.RetryInterval = server.RetryInterval
	sc.RetryMaxAttempts = server.RetryMaxAttempts
	sc.EncryptKey = server.EncryptKey
	if t := cfg.TLS; t != nil && t.EnableRPC {
		sc.TLS = rpcTLSConfig(t)
	}
	if l := cfg.Limits; l != nil {
		sc.RPCMaxConnsPerClient = l.RPCMaxConnsPerClient
		sc.RPCHandshakeTimeout = l.RPCHandshakeTimeout
	}
	if server.JobGCInterval > 0 {
		sc.JobGCInterval = server.JobGCInterval
	}
	sc.JobGCThreshold = server.JobGCThreshold
	sc.NodeGCThreshold = server.NodeGCThreshold
	sc.EvalGCThreshold = server.EvalGCThreshold
	if server.JobTrackedVersions > 0 {
		sc.JobTrackedVersions = server.JobTrackedVersions
	}
	if server.JobMaxCount > 0 {
		sc.JobMaxCount = server.JobMaxCount
	}
	sc.JobMaxTotalSize = server.JobMaxTotalSize
	sc.SchedulerAlgorithm = server.SchedulerAlgorithm
	sc.PreemptionConfig = server.PreemptionConfig
	sc.PurgeHistoryRetention = server.PurgeHistoryRetention
	sc.RaftSnapshotThreshold = uint64(server.RaftSnapshotThreshold)
	sc.RaftSnapshotInterval = server.RaftSnapshotInterval
	sc.RaftTrailingLogs = uint64(server.RaftTrailingLogs)
	sc.ReapInterval = cfg.reapInterval
	sc.EnableEventBroker = server.EnableEventBroker
	sc.EventBufferSize = int64(server.EventBufferSize)
	sc.NumSchedulers = server.NumSchedulers
	if server.HeartbeatGrace > 0 {
		sc.HeartbeatGrace = server.HeartbeatGrace
	}
	if cfg.minHeartbeatTTL > 0 {
		sc.MinHeartbeatTTL = cfg.minHeartbeatTTL
	}
	sc.ClientIntroduction = nomad.ClientIntroductionConfig(server.ClientIntroduction)

	if acl := cfg.ACL; acl != nil {
		sc.ACLEnabled = acl.Enabled
		if acl.TokenMinExpirationTTL > 0 {
			sc.ACLTokenMinExpirationTTL = acl.TokenMinExpirationTTL
		}
		if acl.TokenMaxExpirationTTL > 0 {
			sc.ACLTokenMaxExpirationTTL = acl.TokenMaxExpirationTTL
		}
	}

	// A dev agent that is a cluster of one keeps Raft in memory, on an in-memory transport:
	// nothing to bind, nothing left behind. Anything else speaks Raft on the RPC address.
	singleDev := cfg.DevMode && server.BootstrapExpect <= 1 && len(server.RetryJoin) == 0
	sc.FastRaft = cfg.DevMode
	if !singleDev {
		sc.RaftBindAddr = net.JoinHostPort(cfg.Addresses.RPC, strconv.Itoa(cfg.Ports.RPC))
		sc.RaftAdvertiseAddr = cfg.Advertise.RPC
		sc.SerfBindAddr = net.JoinHostPort(cfg.Addresses.Serf, strconv.Itoa(cfg.Ports.Serf))
		sc.SerfAdvertiseAddr = cfg.Advertise.Serf
	}
	return sc
}

// rpcTLSConfig is the tls block as the RPC port of a server, or a client agent's connection
// to one, uses it.
func rpcTLSConfig(t *TLSConfig) *transport.TLSConfig {
	return &transport.TLSConfig{
		Config:               tlsutil.Config{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, MinVersion: t.TLSMinVersion},
		VerifyServerHostname: t.VerifyServerHostname,
		RPCUpgradeMode:       t.RPCUpgradeMode,
	}
}

// joinAddrs gives each join address the default port if it names none.
func joinAddrs(addrs []string, port int) []string {
	var out []string
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err == nil {
			out = append(out, a)
			continue
		}
		out = append(out, net.JoinHostPort(a, strconv.Itoa(port)))
	}
	return out
}

// ReloadTLS reads the tls block's files again (SIGHUP) for HTTPS and the RPC port; the next
// connection uses them. On error each listener keeps the certificates it had.
func (a *Agent) ReloadTLS() error {
	var errs []error
	if a.httpTLS != nil {
		errs = append(errs, a.httpTLS.Reload())
	}
	if a.server != nil {
		errs = append(errs, a.server.ReloadTLS())
	}
	if a.clientTLS != nil {
		errs = append(errs, a.clientTLS.Reload())
	}
	return errors.Join(errs...)
}

// Server returns the agent's server, nil for a client-only agent.
func (a *Agent) Server() *nomad.Server { return a.server }

// Client returns the agent's client, nil when it runs none.
func (a *Agent) Client() *client.Client { return a.client }

// Config returns the agent's effective configuration (after NormalizeAddrs). Callers must not
// change it.
func (a *Agent) Config() *Config { return a.config }

// HTTPAddr is the address the HTTP API listens on, as host:port.
func (a *Agent) HTTPAddr() string { return a.http.listener.Addr().String() }

// Leave takes the agent's server out of the cluster gracefully before a shutdown
// (leave_on_interrupt / leave_on_terminate): it leaves gossip and Raft, so the others do not
// wait for it as a failed server.
func (a *Agent) Leave() {
	if a.server == nil {
		return
	}
	if err := a.server.Leave(); err != nil {
		a.logger.Error("leaving the cluster failed", "error", err)
	}
}

// Shutdown stops the HTTP API, waiting a little for requests in flight, then the server. It
// is safe to call more than once.
func (a *Agent) Shutdown() {
	a.shutdownOnce.Do(func() {
		a.logger.Info("shutting down agent")
		if a.client != nil {
			a.client.Shutdown()
		}
		a.cancel()
		ctx, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
		a.http.shutdown(ctx)
		for _, srv := range []*http.Server{a.streamSrv, a.agentStreamSrv} {
			if srv != nil {
				if err := srv.Shutdown(ctx); err != nil {
					_ = srv.Close()
				}
			}
		}
		cancel()
		if a.rpcServers != nil {
			a.rpcServers.Close()
		}
		a.streamWG.Wait()
		if a.server != nil {
			if err := a.server.Shutdown(); err != nil {
				a.logger.Error("server shutdown failed", "error", err)
			}
		}
		if a.tempAllocDir != "" {
			_ = os.RemoveAll(a.tempAllocDir)
		}
		a.unlockDataDir()
	})
}

// unlockDataDir releases data_dir once everything in it is closed.
func (a *Agent) unlockDataDir() {
	if a.dataDirLock != nil {
		_ = a.dataDirLock.Close()
		a.dataDirLock = nil
	}
}
