package agent

import (
	"context"
	"errors"
	"fmt"
	"github.com/hashicorp/nomad/api"
	"net"
	"os"
	"path/filepath"

	"github.com/nomadfork/nomad/client"
	"github.com/nomadfork/nomad/client/artifact"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker"
	"github.com/nomadfork/nomad/client/drivers/execdriver"
	"github.com/nomadfork/nomad/client/fingerprint"
	"github.com/nomadfork/nomad/client/template"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// localServers lets the agent's client call the agent's own server in-process. The node's
// secret is registered with the server first, so the client's calls are trusted like the
// agent itself even with ACLs on; over RPC the same calls would need the secret or a token
// with node write access.
type localServers struct {
	srv *nomad.Server
}

func (l localServers) RegisterNode(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	// No wait for the agent's own server to elect itself: before a leader the call fails and the
	// client retries after its retry interval (1s), and /v1/status/leader on a -dev agent waits
	// for the registration instead. Registering within the agent's first second would give the
	// node a StatusUpdatedAt equal to the second the agent was started in, which the official
	// client's suite (TestNodes_Info) requires to be later.
	if args.Node != nil {
		l.srv.TrustLocalNode(args.Node.SecretID)
	}
	return l.srv.Endpoints.Node.Register(args, reply)
}

func (l localServers) UpdateNodeStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	return l.srv.Endpoints.Node.UpdateStatus(args, reply)
}

func (l localServers) NodeAllocations(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
	return l.srv.Endpoints.Node.GetAllocs(args, reply)
}

func (l localServers) UpdateAllocations(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	return l.srv.Endpoints.Alloc.UpdateFromClient(args, reply)
}

func (l localServers) UpsertServiceRegistrations(args *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error {
	return l.srv.Endpoints.Services.Upsert(args, reply)
}

func (l localServers) DeleteServiceRegistration(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error {
	return l.srv.Endpoints.Services.DeleteByID(args, reply)
}

func (l localServers) SignIdentities(args *structs.AllocIdentitiesRequest, reply *structs.AllocIdentitiesResponse) error {
	return l.srv.Endpoints.Alloc.SignIdentities(args, reply)
}

func (l localServers) MigrateAllocData(args *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error {
	return l.srv.Endpoints.Alloc.MigrateData(args, reply)
}

func (l localServers) SignNodeIdentity(args *structs.NodeIdentitySignRequest, reply *structs.NodeIdentitySignResponse) error {
	return l.srv.Endpoints.Node.SignIdentity(args, reply)
}

// startClient starts the agent's client against its own server. A dev agent keeps its
// allocation directories in a temporary directory that shutdown removes.
func (a *Agent) startClient() error {
	cfg := a.config
	cc := cfg.Client
	allocDir, stateDir := cc.AllocDir, cc.StateDir
	if cfg.DataDir != "" {
		if allocDir == "" {
			allocDir = filepath.Join(cfg.DataDir, "alloc")
		}
		if stateDir == "" {
			stateDir = filepath.Join(cfg.DataDir, "client")
		}
	}
	if allocDir == "" {
		tmp, err := os.MkdirTemp("", "nomad-alloc-")
		if err != nil {
			return fmt.Errorf("creating allocation directory: %w", err)
		}
		allocDir, a.tempAllocDir = tmp, tmp
	}
	clientDrivers, err := a.clientDrivers(allocDir, stateDir)
	if err != nil {
		return err
	}
	servers, err := a.clientServers()
	if err != nil {
		return err
	}
	c, err := client.New(&client.Config{
		Name:        cfg.Name,
		Region:      cfg.Region,
		Datacenter:  cfg.Datacenter,
		NodePool:    cc.NodePool,
		NodeClass:   cc.NodeClass,
		Version:     buildVersion(),
		Meta:        cc.Meta,
		HostVolumes: hostVolumes(cc.HostVolumes),
		Artifact:    artifactConfig(cc.Artifact),
		HTTPAddr:    a.nodeHTTPAddr(),
		TemplateAPI: a.templateAPI(),
		StateDir:    stateDir,
		IntroToken:  cc.IntroToken,
		AllocDir:    allocDir,
		Drivers:     clientDrivers,
		Logger:      a.logger,

		DisableRemoteExec: cc.DisableRemoteExec,
		Options:           cc.Options,
		NetworkInterface:  cc.NetworkInterface,
		CNIPath:           cc.CNIPath,
		BridgeName:        cc.BridgeNetworkName,
		BridgeSubnet:      cc.BridgeNetworkSubnet,
		Resources:         clientResources(cc),

		PublishNodeMetrics:       cfg.telemetry().PublishNodeMetrics,
		PublishAllocationMetrics: cfg.telemetry().PublishAllocationMetrics,
	}, servers)
	if err != nil {
		if a.rpcServers != nil {
			a.rpcServers.Close()
		}
		return err
	}
	a.client = c
	if a.rpcServers != nil {
		a.serveClientStreams(a.rpcServers.Streams())
	} else {
		// Another server relays requests for this node's allocations here.
		ln := newPipeListener(a.ctx)
		a.server.ServeLocalNode(c.NodeID(), ln.dial)
		a.serveClientStreams(ln)
	}
	return nil
}

// templateAPI is where templates' Nomad functions read variables and services: this agent's
// own HTTP API, which on a client-only agent sends the task's workload identity on to the
// servers to be checked there.
func (a *Agent) templateAPI() template.NomadAPI {
	if t := a.config.TLS; t != nil && t.EnableHTTP {
		// The agent's own certificate serves as the client certificate, which an agent
		// that verifies HTTPS clients asks for.
		return template.NomadAPI{Address: "https://" + a.HTTPAddr(), CACert: t.CAFile,
			ClientCert: t.CertFile, ClientKey: t.KeyFile}
	}
	return template.NomadAPI{Address: "http://" + a.HTTPAddr()}
}

// nodeHTTPAddr is the HTTP address the node advertises. A client-only agent advertises none:
// its HTTP API answers nothing about allocations (it cannot check tokens), and without an
// address the official client and the CLI send exec and logs to a server, which relays them.
func (a *Agent) nodeHTTPAddr() string {
	if a.server == nil {
		return ""
	}
	return a.HTTPAddr()
}

// clientServers is how the client reaches the servers: the agent's own server in-process, or
// the RPC port of the servers a client-only agent names.
func (a *Agent) clientServers() (client.Servers, error) {
	if a.server != nil {
		return localServers{srv: a.server}, nil
	}
	return a.rpcServers, nil
}

// newRPCServers is a client-only agent's connection to the servers it names.
func (a *Agent) newRPCServers() (*client.RPCServers, error) {
	cc := a.config.Client
	addrs := append(append([]string(nil), cc.Servers...), cc.RetryJoin...)
	var dial client.Dialer
	if a.clientTLS != nil {
		dial = a.clientTLS.Dial
	}
	return client.NewRPCServers(addrs, nomad.ClientYamuxConfig(), dial, a.logger)
}

// pipeListener hands out in-process connections, one per stream a server opens to the client
// of this agent.
type pipeListener struct {
	ctx   context.Context
	conns chan net.Conn
}

func newPipeListener(ctx context.Context) *pipeListener {
	return &pipeListener{ctx: ctx, conns: make(chan net.Conn)}
}

func (l *pipeListener) dial() (net.Conn, error) {
	ours, theirs := net.Pipe()
	select {
	case l.conns <- theirs:
		return ours, nil
	case <-l.ctx.Done():
		return nil, errors.New("agent shutting down")
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "in-process" }

// clientDrivers are the drivers the client offers. raw_exec runs commands as the agent's
// user without isolation, so, as upstream, only a dev agent or a
// `plugin "raw_exec" { config { enabled = true } }` block turns it on. The mock driver is
// for tests: a dev agent offers it (as upstream's non-release builds do; the official
// client's tests use it), any other agent needs a `plugin "mock_driver"` block. docker is always offered, as
// upstream: it fingerprints unhealthy where no engine answers.
func (a *Agent) clientDrivers(allocDir, stateDir string) ([]drivers.Driver, error) {
	cfg := a.config
	var out []drivers.Driver
	if cfg.DevMode || pluginEnabled(cfg, "raw_exec") {
		a.logger.Warn("raw_exec driver is enabled: its tasks run as the agent's user, without isolation")
		out = append(out, drivers.RawExec{})
	}
	mock := cfg.DevMode
	for _, p := range cfg.Plugins {
		mock = mock || p.Name == "mock_driver"
	}
	if mock {
		out = append(out, drivers.Mock{})
	}
	var dockerCfg map[string]any
	for _, p := range cfg.Plugins {
		if p.Name == "docker" {
			dockerCfg = p.Config
		}
	}
	opts, warnings, err := docker.PluginOptions(dockerCfg)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		a.logger.Warn(w)
	}
	opts.AllocRoot, opts.Logger = allocDir, a.logger
	opts.ProtectedDirs = []string{cfg.DataDir, stateDir, allocDir}
	out = append(out, docker.New(opts))
	// exec is always offered, as upstream: it fingerprints undetected, saying why, where it
	// cannot isolate tasks (not Linux, not root, no usable cgroups).
	if env := cfg.Client.ChrootEnv; env != nil {
		if err := execdriver.CheckChrootEnv(env); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	var execCfg map[string]any
	for _, p := range cfg.Plugins {
		if p.Name == "exec" {
			execCfg = p.Config
		}
	}
	execOpts, warnings, err := execdriver.PluginOptions(execCfg)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		a.logger.Warn(w)
	}
	execOpts.ChrootEnv, execOpts.Logger = cfg.Client.ChrootEnv, a.logger
	out = append(out, execdriver.New(execOpts))
	return out, nil
}

func pluginEnabled(cfg *Config, name string) bool {
	for _, p := range cfg.Plugins {
		if p.Name != name {
			continue
		}
		enabled, _ := p.Config["enabled"].(bool)
		return enabled
	}
	return false
}

// clientResources is what the client block says about the node's resources.
func clientResources(cc *ClientConfig) fingerprint.Config {
	out := fingerprint.Config{
		CPUTotalCompute: cc.CPUTotalCompute, MemoryTotalMB: cc.MemoryTotalMB,
		MinDynamicPort: cc.MinDynamicPort, MaxDynamicPort: cc.MaxDynamicPort,
	}
	if r := cc.Reserved; r != nil {
		out.ReservedCPU, out.ReservedMemMB, out.ReservedDisk, out.ReservedPorts = r.CPU, r.MemoryMB, r.DiskMB, r.ReservedPorts
	}
	for _, hn := range cc.HostNetworks {
		out.HostNetworks = append(out.HostNetworks, fingerprint.HostNetwork{
			Name: hn.Name, CIDR: hn.CIDR, Interface: hn.Interface, ReservedPorts: hn.ReservedPorts})
	}
	return out
}

// hostVolumes is what the node advertises of its host_volume blocks.
func hostVolumes(in []*HostVolumeConfig) map[string]*api.HostVolumeInfo {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]*api.HostVolumeInfo, len(in))
	for _, v := range in {
		out[v.Name] = &api.HostVolumeInfo{Path: v.Path, ReadOnly: v.ReadOnly}
	}
	return out
}

func artifactConfig(ac *ArtifactConfig) artifact.Config {
	if ac == nil {
		return artifact.Config{}
	}
	return artifact.Config{
		HTTPReadTimeout:             ac.HTTPReadTimeout,
		HTTPMaxSize:                 ac.HTTPMaxSize,
		GitTimeout:                  ac.GitTimeout,
		DecompressionFileCountLimit: ac.DecompressionFileCountLimit,
		DecompressionSizeLimit:      ac.DecompressionSizeLimit,
	}
}
