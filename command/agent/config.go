package agent

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/structs"
	"github.com/nomadfork/nomad/tlsutil"
)

// Config is the agent configuration. It is assembled by the command from
// DefaultConfig or DevConfig, then every -config path (LoadConfig) and then the
// command-line flags, each merged over the previous with Merge; NormalizeAddrs
// and Validate run last.
//
// The exported field names are what /v1/agent/self reports, so they follow
// Nomad's names except where noted.
type Config struct {
	Name       string
	Region     string
	Datacenter string
	DataDir    string
	PluginDir  string
	BindAddr   string
	LogLevel   string
	LogJSON    bool

	// EnableDebug turns on the profiling endpoints.
	EnableDebug bool

	// LeaveOnInterrupt and LeaveOnTerminate make the agent leave the
	// cluster gracefully on SIGINT and SIGTERM respectively.
	LeaveOnInterrupt bool
	LeaveOnTerminate bool

	Ports     *Ports
	Addresses *Addresses
	Advertise *AdvertiseAddrs
	Server    *ServerConfig
	Client    *ClientConfig
	ACL       *ACLConfig
	UI        *UIConfig
	Limits    *Limits
	TLS       *TLSConfig
	Telemetry *TelemetryConfig

	// Plugins holds one entry per plugin name; a later block for the same
	// name replaces the earlier one whole.
	Plugins []*PluginConfig

	// DevMode is set by -dev only; no file key sets it.
	DevMode bool

	// Files lists the configuration files loaded, in merge order.
	Files []string

	// Warnings name the keys the files set that this build accepts and does not act on, each
	// once, in the order first met. The agent logs them as it starts.
	Warnings []string

	// assignments replays what configuration files set, so that Merge can
	// tell "enabled = false" from a key that was never written: both leave
	// the zero value in the exported field. Built once per file by
	// fileConfig.assignments and never mutated afterwards.
	assignments []func(*Config)

	// eventHeartbeat overrides how often an idle event stream sends `{}`; tests shorten it.
	eventHeartbeat time.Duration

	// reapInterval overrides how often the leader removes expired tokens and purge records
	// past retention (nomad.Config.ReapInterval); tests shorten it. No file key sets it.
	reapInterval time.Duration

	// minHeartbeatTTL overrides the heartbeat TTL servers give clients
	// (nomad.Config.MinHeartbeatTTL); tests shorten it. No file key sets it.
	minHeartbeatTTL time.Duration

	// httpBodyIdleTimeout overrides how long a request body may stall (httpBodyIdleTimeout);
	// tests shorten it. No file key sets it.
	httpBodyIdleTimeout time.Duration

	// httpHeaderTimeout overrides how long plain HTTP may take to send a request's headers
	// (httpHeaderTimeout); tests shorten it. No file key sets it.
	httpHeaderTimeout time.Duration
}

// Ports are the TCP ports the agent listens on.
type Ports struct {
	HTTP int
	RPC  int
	Serf int
}

// Addresses are the IPs each listener binds to. NormalizeAddrs fills empty
// ones from BindAddr.
type Addresses struct {
	HTTP string
	RPC  string
	Serf string
}

// AdvertiseAddrs are the addresses other agents and clients use to reach
// this one. After NormalizeAddrs each is "host:port".
type AdvertiseAddrs struct {
	HTTP string
	RPC  string
	Serf string
}

// ServerConfig configures the server half of the agent.
type ServerConfig struct {
	Enabled         bool
	BootstrapExpect int
	NumSchedulers   int

	// RetryJoin comes from either server.retry_join or
	// server.server_join.retry_join; a block may use only one of the two.
	RetryJoin        []string
	RetryMaxAttempts int
	RetryInterval    time.Duration

	JobGCInterval  time.Duration
	JobGCThreshold time.Duration
	// NodeGCThreshold is how long a node stays down before the GC removes it.
	NodeGCThreshold    time.Duration
	EvalGCThreshold    time.Duration
	JobTrackedVersions int
	// JobMaxCount is server.job_max_count; 0 is the server's default.
	JobMaxCount int
	// JobMaxTotalSize is server.job_max_total_size in bytes; 0 is the server's default.
	JobMaxTotalSize int64
	// SchedulerAlgorithm is default_scheduler_config's scheduler_algorithm: "binpack" (the
	// default, also when empty) or "spread".
	SchedulerAlgorithm string
	// PreemptionConfig is default_scheduler_config's preemption_config (system jobs only by
	// default, as upstream).
	PreemptionConfig      structs.PreemptionConfig
	EventBufferSize       int
	EnableEventBroker     bool
	PurgeHistoryRetention time.Duration
	HeartbeatGrace        time.Duration
	// RaftSnapshotThreshold, RaftSnapshotInterval and RaftTrailingLogs are upstream's
	// raft_snapshot_threshold, raft_snapshot_interval and raft_trailing_logs; 0 takes the
	// server's defaults (8192 entries, 120s, 10240 entries).
	RaftSnapshotThreshold int
	RaftSnapshotInterval  time.Duration
	RaftTrailingLogs      int

	AuthoritativeRegion string

	// ClientIntroduction is server.client_introduction: how a node the cluster does not
	// know must introduce itself (nomad.ClientIntroductionConfig).
	ClientIntroduction ClientIntroductionConfig

	// EncryptKey is the gossip encryption key; it must never be reported
	// by /v1/agent/self.
	EncryptKey string `json:"-"`
}

// ClientIntroductionConfig is server.client_introduction, upstream's keys and defaults.
type ClientIntroductionConfig struct {
	// Enforcement is none, warn or strict.
	Enforcement        string
	DefaultIdentityTTL time.Duration
	MaxIdentityTTL     time.Duration
}

// ClientConfig configures the client half of the agent.
type ClientConfig struct {
	Enabled bool
	// Servers and RetryJoin (client.server_join.retry_join) are the servers' RPC addresses
	// a client-only agent connects to, tried in turn.
	Servers           []string
	RetryJoin         []string
	NodeClass         string
	NodePool          string
	Meta              map[string]string
	Options           map[string]string
	DisableRemoteExec bool
	StateDir          string
	AllocDir          string
	NetworkInterface  string
	// CNIPath lists the directories (colon-separated) searched for CNI plugins before
	// /opt/cni/bin and /usr/lib/cni; BridgeNetworkName and BridgeNetworkSubnet are the bridge
	// of `network { mode = "bridge" }` ("" for upstream's nomad and 172.26.64.0/20).
	CNIPath             string
	BridgeNetworkName   string
	BridgeNetworkSubnet string
	// IntroToken is the client introduction token, from -client-intro-token or
	// NOMAD_CLIENT_INTRO_TOKEN (which wins), as upstream: no configuration file key, so the
	// secret is not left in a file every agent reads. It is never reported by /v1/agent/self.
	IntroToken string `json:"-"`

	// HostVolumes holds one entry per volume name; a later block for the
	// same name replaces the earlier one whole.
	HostVolumes []*HostVolumeConfig
	// HostNetworks holds one entry per host_network name; a later block for the same name
	// replaces the earlier one whole.
	HostNetworks []*HostNetworkConfig

	// CPUTotalCompute (MHz) and MemoryTotalMB replace what fingerprinting finds; 0 keeps it.
	CPUTotalCompute int
	MemoryTotalMB   int
	// MinDynamicPort and MaxDynamicPort bound the dynamic ports; 0 is upstream's default
	// (20000–32000).
	MinDynamicPort int
	MaxDynamicPort int
	Reserved       *ReservedConfig
	// Artifact bounds tasks' artifact downloads; nil (or a zero field) is upstream's default.
	Artifact *ArtifactConfig
	// ChrootEnv maps host paths to where the exec driver mounts them (read-only) in each
	// task's chroot; nil is the driver's default list, as upstream.
	ChrootEnv map[string]string
}

// ArtifactConfig is the client's artifact block.
type ArtifactConfig struct {
	HTTPReadTimeout             time.Duration
	HTTPMaxSize                 int64
	GitTimeout                  time.Duration
	DecompressionFileCountLimit int
	DecompressionSizeLimit      int64
}

// ReservedConfig is the client's reserved block: resources allocations may not use.
type ReservedConfig struct {
	CPU           int
	MemoryMB      int
	DiskMB        int
	ReservedPorts string
}

// HostVolumeConfig is a client host_volume block.
type HostVolumeConfig struct {
	Name     string
	Path     string
	ReadOnly bool
}

// HostNetworkConfig is a client host_network block.
type HostNetworkConfig struct {
	Name          string
	CIDR          string
	Interface     string
	ReservedPorts string
}

// ACLConfig configures the ACL system.
type ACLConfig struct {
	Enabled               bool
	TokenTTL              time.Duration
	PolicyTTL             time.Duration
	RoleTTL               time.Duration
	TokenMinExpirationTTL time.Duration
	TokenMaxExpirationTTL time.Duration
}

// TLSConfig is the tls block (upstream's keys). The files are read and checked when the agent
// starts and again on SIGHUP.
type TLSConfig struct {
	// EnableHTTP serves the HTTP API over HTTPS.
	EnableHTTP bool
	// EnableRPC makes every Raft and server RPC connection mutual TLS.
	EnableRPC            bool
	CAFile               string
	CertFile             string
	KeyFile              string
	VerifyServerHostname bool
	// VerifyHTTPSClient requires a certificate from the CA of every HTTPS client.
	VerifyHTTPSClient bool
	TLSMinVersion     string
	// RPCUpgradeMode also accepts the cluster-key handshake on the RPC port (never bare
	// traffic) while a keyed cluster moves to TLS.
	RPCUpgradeMode bool
}

// UIConfig configures the web UI.
type UIConfig struct {
	Enabled bool
}

// Limits bound per-client resource use of the HTTP and RPC listeners.
type Limits struct {
	HTTPMaxConnsPerClient int
	RPCMaxConnsPerClient  int
	HTTPSHandshakeTimeout time.Duration
	RPCHandshakeTimeout   time.Duration
}

// PluginConfig is a plugin "NAME" block. Config is the plugin's own
// configuration, decoded without a schema: strings, bools, int (whole
// numbers), float64, []any and map[string]any. A nested block becomes a map,
// a block type repeated becomes a []any of maps, and block labels nest as
// map keys.
type PluginConfig struct {
	Name   string
	Args   []string
	Config map[string]any
}

// DefaultConfig returns the configuration an agent runs with when no file or
// flag says otherwise.
func DefaultConfig() *Config {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "nomad"
	}
	return &Config{
		Name:       name,
		Region:     "global",
		Datacenter: "dc1",
		BindAddr:   "0.0.0.0",
		LogLevel:   "INFO",
		Ports:      &Ports{HTTP: 4646, RPC: 4647, Serf: 4648},
		Addresses:  &Addresses{},
		Advertise:  &AdvertiseAddrs{},
		Server: &ServerConfig{
			NumSchedulers:         runtime.NumCPU(),
			RetryInterval:         30 * time.Second,
			JobGCInterval:         5 * time.Minute,
			JobGCThreshold:        4 * time.Hour,
			NodeGCThreshold:       24 * time.Hour,
			EvalGCThreshold:       time.Hour,
			JobTrackedVersions:    6,
			EventBufferSize:       100,
			EnableEventBroker:     true,
			PurgeHistoryRetention: 720 * time.Hour,
			HeartbeatGrace:        10 * time.Second,
			PreemptionConfig:      structs.PreemptionConfig{SystemSchedulerEnabled: true},
			ClientIntroduction: ClientIntroductionConfig{
				Enforcement:        structs.NodeIntroductionEnforcementWarn,
				DefaultIdentityTTL: structs.DefaultIntroductionTokenTTL,
				MaxIdentityTTL:     structs.MaxIntroductionTokenTTL,
			},
		},
		Client: &ClientConfig{
			NodePool: "default",
			Meta:     map[string]string{},
			Options:  map[string]string{},
		},
		ACL: &ACLConfig{
			TokenTTL:              30 * time.Second,
			PolicyTTL:             30 * time.Second,
			RoleTTL:               30 * time.Second,
			TokenMinExpirationTTL: time.Minute,
			TokenMaxExpirationTTL: 24 * time.Hour,
		},
		UI:  &UIConfig{Enabled: true},
		TLS: &TLSConfig{},
		Limits: &Limits{
			HTTPMaxConnsPerClient: 100,
			RPCMaxConnsPerClient:  100,
			HTTPSHandshakeTimeout: 5 * time.Second,
			RPCHandshakeTimeout:   5 * time.Second,
		},
	}
}

// DevConfig returns the configuration for -dev: a single node that is both
// server and client, on loopback, keeping its state in memory.
func DevConfig() *Config {
	c := DefaultConfig()
	c.DevMode = true
	c.BindAddr = "127.0.0.1"
	c.DataDir = ""
	c.LogLevel = "DEBUG"
	c.EnableDebug = true
	c.Server.Enabled = true
	c.Server.BootstrapExpect = 1
	c.Client.Enabled = true
	return c
}

// LoadConfig reads one configuration file, or every *.hcl and *.json file
// directly inside a directory in lexical order, later files winning. A file
// whose content is a JSON object (or that is named *.json) is read as HCL's
// JSON syntax, any other file as native HCL: upstream's tools write JSON
// configuration under names with no extension at all.
//
// The result holds only what the files set; merge it over DefaultConfig or
// DevConfig.
func LoadConfig(path string) (*Config, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("failed to load config: %w", err)
	}
	if !info.IsDir() {
		return loadConfigFile(path)
	}

	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("failed to load config directory: %w", err)
	}
	result := &Config{}
	for _, entry := range entries { // os.ReadDir sorts by name
		name := entry.Name()
		ext := filepath.Ext(name)
		// Dot files are editor and tool droppings (.#x.hcl, .x.hcl.swp).
		if entry.IsDir() || strings.HasPrefix(name, ".") || (ext != ".hcl" && ext != ".json") {
			continue
		}
		cfg, err := loadConfigFile(filepath.Join(path, name))
		if err != nil {
			return nil, err
		}
		result = result.Merge(cfg)
	}
	return result, nil
}

// isJSONConfig reports whether src is JSON: native HCL can never begin with
// '{' (an item starts with a name), so the first non-space byte decides.
func isJSONConfig(path string, src []byte) bool {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return true
	}
	trimmed := bytes.TrimLeft(src, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

func loadConfigFile(path string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to load config: %w", err)
	}
	// Editors on some systems start files with a UTF-8 byte order mark; neither syntax allows it.
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))

	// hclparse.Parser caches files by name; a fresh one per load keeps a
	// rewritten file from being served stale.
	parser := hclparse.NewParser()
	var file *hcl.File
	var diags hcl.Diagnostics
	// remap points diagnostics at the text as written (see parseAgentHCL).
	remap := func(d hcl.Diagnostics) hcl.Diagnostics { return d }
	if isJSONConfig(path, src) {
		file, diags = parser.ParseJSON(src, path)
	} else {
		file, remap, diags = parseAgentHCL(parser, src, path)
	}
	if diags.HasErrors() {
		return nil, diagsError(path, diags)
	}

	// Upstream merges a block written twice (two server blocks, in one file
	// as across files); each part is decoded on its own, in file order, and
	// its assignments replayed after the previous part's.
	var assignments []func(*Config)
	var warnings []string
	for _, body := range splitRepeatedBlocks(file.Body) {
		var fc fileConfig
		if diags := gohcl.DecodeBody(body, nil, &fc); diags.HasErrors() {
			return nil, diagsError(path, remap(diags))
		}
		part, partWarnings, diags := fc.assignments()
		if diags.HasErrors() {
			return nil, diagsError(path, remap(diags))
		}
		assignments = append(assignments, part...)
		warnings = appendNew(warnings, partWarnings...)
	}

	cfg := &Config{Files: []string{path}, Warnings: warnings, assignments: assignments}
	for _, assign := range assignments {
		assign(cfg)
	}
	return cfg, nil
}

// diagsError renders every error diagnostic as "file:line,col: summary;
// detail", so each names the file, the position and (through hcl's own
// wording or ours) the key.
func diagsError(path string, diags hcl.Diagnostics) error {
	var errs []error
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		where := path
		if d.Subject != nil {
			where = d.Subject.String()
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		errs = append(errs, fmt.Errorf("%s: %s", where, msg))
	}
	return errors.Join(errs...)
}

// Copy returns a deep copy of c.
func (c *Config) Copy() *Config {
	if c == nil {
		return nil
	}
	out := deepCopy(reflect.ValueOf(c)).Interface().(*Config)
	out.assignments = slices.Clone(c.assignments)
	return out
}

// Merge returns a new Config: c overlaid with other, neither modified. A field
// of other overrides c when a configuration file behind other set it (even to
// false, 0 or "") or when it is not the zero value. Maps merge key by key,
// Plugins and Client.HostVolumes merge by name, Files concatenate, any other
// list is replaced whole. The exception is server.enabled and client.enabled
// in a file, which only ever turn a role on (see assignRole).
func (c *Config) Merge(other *Config) *Config {
	if c == nil {
		c = &Config{}
	}
	result := c.Copy()
	if other == nil {
		return result
	}
	// Replay first, then overlay: the overlay carries any value a caller set
	// in code after loading, and re-applies the file values unchanged.
	for _, assign := range other.assignments {
		assign(result)
	}
	mergeStruct(reflect.ValueOf(result).Elem(), reflect.ValueOf(other).Elem())
	result.Files = slices.Concat(c.Files, other.Files)
	result.Warnings = appendNew(slices.Clone(c.Warnings), other.Warnings...)
	result.assignments = slices.Concat(c.assignments, other.assignments)
	return result
}

// appendNew appends each of items that list does not hold yet: a key set in several files
// warns once.
func appendNew(list []string, items ...string) []string {
	for _, item := range items {
		if !slices.Contains(list, item) {
			list = append(list, item)
		}
	}
	return list
}

// NormalizeAddrs fills empty Addresses from BindAddr, and empty Advertise
// addresses from the bound address (or, when that is 0.0.0.0 or ::, from
// the host's first private IPv4 address), then gives every advertise
// address the listener's port if it has none.
func (c *Config) NormalizeAddrs() {
	bind := c.BindAddr
	if bind == "" {
		bind = "0.0.0.0"
	}
	addrs, ports, adv := ensure(&c.Addresses), ensure(&c.Ports), ensure(&c.Advertise)
	for _, a := range []*string{&addrs.HTTP, &addrs.RPC, &addrs.Serf} {
		if *a == "" {
			*a = bind
		}
	}
	adv.HTTP = advertiseAddr(adv.HTTP, addrs.HTTP, ports.HTTP)
	adv.RPC = advertiseAddr(adv.RPC, addrs.RPC, ports.RPC)
	adv.Serf = advertiseAddr(adv.Serf, addrs.Serf, ports.Serf)
}

func advertiseAddr(adv, bound string, port int) string {
	if adv == "" {
		adv = bound
		if ip := net.ParseIP(bound); ip == nil || ip.IsUnspecified() {
			adv = privateIP()
		}
	}
	if _, _, err := net.SplitHostPort(adv); err == nil {
		return adv
	}
	return net.JoinHostPort(strings.Trim(adv, "[]"), strconv.Itoa(port))
}

// privateIP picks the address peers are most likely to reach: the first
// private IPv4, else the first global unicast IPv4, else loopback.
func privateIP() string {
	addrs, _ := net.InterfaceAddrs()
	var fallback string
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || ipnet.IP.To4() == nil || !ipnet.IP.IsGlobalUnicast() {
			continue
		}
		if ipnet.IP.IsPrivate() {
			return ipnet.IP.String()
		}
		if fallback == "" {
			fallback = ipnet.IP.String()
		}
	}
	if fallback != "" {
		return fallback
	}
	return "127.0.0.1"
}

// Validate reports every invalid value, each error naming its key as it is
// written in a configuration file.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	nonNegative := func(key string, v int64) {
		if v < 0 {
			bad(key, "must not be negative, got %d", v)
		}
	}
	nonNegativeDur := func(key string, d time.Duration) {
		if d < 0 {
			bad(key, "must not be negative, got %s", d)
		}
	}

	if c.Region == "" {
		bad("region", "must not be empty")
	}
	if c.Datacenter == "" {
		bad("datacenter", "must not be empty")
	}
	if hclog.LevelFromString(c.LogLevel) == hclog.NoLevel {
		bad("log_level", "must be one of TRACE, DEBUG, INFO, WARN, ERROR or OFF, got %q", c.LogLevel)
	}
	if net.ParseIP(c.BindAddr) == nil {
		bad("bind_addr", "must be an IP address, got %q", c.BindAddr)
	}

	ports := valueOr(c.Ports, &Ports{})
	addrs := valueOr(c.Addresses, &Addresses{})
	type listener struct {
		name, addr string
		port       int
	}
	listeners := []listener{
		{"http", addrs.HTTP, ports.HTTP},
		{"rpc", addrs.RPC, ports.RPC},
		{"serf", addrs.Serf, ports.Serf},
	}
	for i, l := range listeners {
		if l.port < 1 || l.port > 65535 {
			bad("ports."+l.name, "must be between 1 and 65535, got %d", l.port)
		}
		if l.addr != "" && net.ParseIP(l.addr) == nil {
			bad("addresses."+l.name, "must be an IP address, got %q", l.addr)
		}
		for _, prev := range listeners[:i] {
			if prev.port == l.port && cmp.Or(prev.addr, c.BindAddr) == cmp.Or(l.addr, c.BindAddr) {
				bad("ports."+l.name, "%d is already used by ports.%s", l.port, prev.name)
			}
		}
	}

	server := valueOr(c.Server, &ServerConfig{})
	client := valueOr(c.Client, &ClientConfig{})
	if !server.Enabled && !client.Enabled {
		bad("server.enabled", "at least one of server.enabled and client.enabled must be true")
	}
	if !c.DevMode && (server.Enabled || client.Enabled) {
		switch {
		case c.DataDir == "":
			bad("data_dir", "must be set unless running with -dev")
		case !filepath.IsAbs(c.DataDir):
			bad("data_dir", "must be an absolute path, got %q", c.DataDir)
		}
	}

	nonNegative("server.bootstrap_expect", int64(server.BootstrapExpect))
	nonNegative("server.num_schedulers", int64(server.NumSchedulers))
	nonNegative("server.retry_max", int64(server.RetryMaxAttempts))
	nonNegative("server.event_buffer_size", int64(server.EventBufferSize))
	nonNegative("server.job_max_count", int64(server.JobMaxCount))
	nonNegative("server.job_max_total_size", server.JobMaxTotalSize)
	switch server.SchedulerAlgorithm {
	case "", "binpack", "spread":
	default:
		bad("server.default_scheduler_config.scheduler_algorithm", "must be \"binpack\" or \"spread\", got %q", server.SchedulerAlgorithm)
	}
	if server.JobTrackedVersions < 1 {
		bad("server.job_tracked_versions", "must be at least 1, got %d", server.JobTrackedVersions)
	}
	if server.JobGCInterval <= 0 {
		bad("server.job_gc_interval", "must be positive, got %s", server.JobGCInterval)
	}
	nonNegativeDur("server.retry_interval", server.RetryInterval)
	nonNegativeDur("server.job_gc_threshold", server.JobGCThreshold)
	nonNegativeDur("server.node_gc_threshold", server.NodeGCThreshold)
	nonNegativeDur("server.eval_gc_threshold", server.EvalGCThreshold)
	nonNegativeDur("server.purge_history_retention", server.PurgeHistoryRetention)
	nonNegativeDur("server.heartbeat_grace", server.HeartbeatGrace)
	nonNegative("server.raft_snapshot_threshold", int64(server.RaftSnapshotThreshold))
	nonNegativeDur("server.raft_snapshot_interval", server.RaftSnapshotInterval)
	nonNegative("server.raft_trailing_logs", int64(server.RaftTrailingLogs))
	// Zero values take the server's defaults (nomad.ClientIntroductionConfig).
	ci := server.ClientIntroduction
	if ci.Enforcement != "" && !structs.ValidNodeIntroductionEnforcement(ci.Enforcement) {
		bad("server.client_introduction.enforcement", "must be \"none\", \"warn\" or \"strict\", got %q", ci.Enforcement)
	}
	nonNegativeDur("server.client_introduction.default_identity_ttl", ci.DefaultIdentityTTL)
	nonNegativeDur("server.client_introduction.max_identity_ttl", ci.MaxIdentityTTL)
	if ci.MaxIdentityTTL > 0 && ci.MaxIdentityTTL < ci.DefaultIdentityTTL {
		bad("server.client_introduction.max_identity_ttl", "must be at least default_identity_ttl (%s), got %s", ci.DefaultIdentityTTL, ci.MaxIdentityTTL)
	}

	nonNegative("client.cpu_total_compute", int64(client.CPUTotalCompute))
	nonNegative("client.memory_total_mb", int64(client.MemoryTotalMB))
	for _, p := range []struct {
		name string
		v    int
	}{{"client.min_dynamic_port", client.MinDynamicPort}, {"client.max_dynamic_port", client.MaxDynamicPort}} {
		if p.v < 0 || p.v > structs.MaxPort {
			bad(p.name, "must be a port from 1 to %d, got %d", structs.MaxPort, p.v)
		}
	}
	if lo, hi := structs.DynamicPortRange(&api.NodeResources{MinDynamicPort: client.MinDynamicPort, MaxDynamicPort: client.MaxDynamicPort}); lo > hi {
		bad("client.min_dynamic_port", "must not exceed client.max_dynamic_port (%d), got %d", hi, lo)
	}
	if r := client.Reserved; r != nil {
		nonNegative("client.reserved.cpu", int64(r.CPU))
		nonNegative("client.reserved.memory", int64(r.MemoryMB))
		nonNegative("client.reserved.disk", int64(r.DiskMB))
		if _, err := structs.ParsePortSpec(r.ReservedPorts); err != nil {
			bad("client.reserved.reserved_ports", "%v", err)
		}
	}
	for _, hn := range client.HostNetworks {
		field := fmt.Sprintf("client.host_network %q", hn.Name)
		if hn.CIDR == "" && hn.Interface == "" {
			bad(field, "needs cidr or interface: a host network is the node's addresses in a cidr and/or on an interface")
		}
		if hn.CIDR != "" {
			if _, err := netip.ParsePrefix(hn.CIDR); err != nil {
				bad(field+" cidr", "%v", err)
			}
		}
		if _, err := structs.ParsePortSpec(hn.ReservedPorts); err != nil {
			bad(field+" reserved_ports", "%v", err)
		}
	}
	for _, v := range client.HostVolumes {
		if !filepath.IsAbs(v.Path) {
			bad(fmt.Sprintf("client.host_volume %q path", v.Name), "must be an absolute path, got %q", v.Path)
			continue
		}
		for _, d := range []struct{ key, dir string }{
			{"data_dir", c.DataDir}, {"client.state_dir", client.StateDir}, {"client.alloc_dir", client.AllocDir},
		} {
			if d.dir != "" && allocdir.Overlaps(v.Path, d.dir) {
				bad(fmt.Sprintf("client.host_volume %q path", v.Name),
					"must neither contain nor lie inside %s %q (tasks would read other allocations' secrets and the agent's state), got %q",
					d.key, d.dir, v.Path)
			}
		}
	}

	acl := valueOr(c.ACL, &ACLConfig{})
	nonNegativeDur("acl.token_ttl", acl.TokenTTL)
	nonNegativeDur("acl.policy_ttl", acl.PolicyTTL)
	nonNegativeDur("acl.role_ttl", acl.RoleTTL)
	nonNegativeDur("acl.token_min_expiration_ttl", acl.TokenMinExpirationTTL)
	nonNegativeDur("acl.token_max_expiration_ttl", acl.TokenMaxExpirationTTL)
	if acl.TokenMaxExpirationTTL > 0 && acl.TokenMinExpirationTTL > acl.TokenMaxExpirationTTL {
		bad("acl.token_min_expiration_ttl", "must not exceed acl.token_max_expiration_ttl (%s), got %s",
			acl.TokenMaxExpirationTTL, acl.TokenMinExpirationTTL)
	}

	validateTLS(valueOr(c.TLS, &TLSConfig{}), bad)

	limits := valueOr(c.Limits, &Limits{})
	nonNegative("limits.http_max_conns_per_client", int64(limits.HTTPMaxConnsPerClient))
	nonNegative("limits.rpc_max_conns_per_client", int64(limits.RPCMaxConnsPerClient))
	nonNegativeDur("limits.https_handshake_timeout", limits.HTTPSHandshakeTimeout)
	nonNegativeDur("limits.rpc_handshake_timeout", limits.RPCHandshakeTimeout)
	nonNegativeDur("telemetry.collection_interval", c.telemetry().CollectionInterval)

	return errors.Join(errs...)
}

func valueOr[T any](p, fallback *T) *T {
	if p == nil {
		return fallback
	}
	return p
}

// validateTLS checks the tls block's keys against each other; the files themselves are
// checked when the agent starts (tlsutil.New), where each error names its file.
func validateTLS(t *TLSConfig, bad func(key, format string, args ...any)) {
	if _, err := tlsutil.ParseMinVersion(t.TLSMinVersion); err != nil {
		bad("tls.tls_min_version", "%s", strings.TrimPrefix(err.Error(), "tls.tls_min_version: "))
	}
	if t.EnableHTTP || t.EnableRPC {
		if t.CertFile == "" {
			bad("tls.cert_file", "must be set when tls.http or tls.rpc is true")
		}
		if t.KeyFile == "" {
			bad("tls.key_file", "must be set when tls.http or tls.rpc is true")
		}
	}
	if (t.EnableRPC || t.VerifyHTTPSClient) && t.CAFile == "" {
		bad("tls.ca_file", "must be set when tls.rpc or tls.verify_https_client is true: peers' certificates are verified against it")
	}
	if t.VerifyHTTPSClient && !t.EnableHTTP {
		bad("tls.verify_https_client", "needs tls.http = true")
	}
	if t.RPCUpgradeMode && !t.EnableRPC {
		bad("tls.rpc_upgrade_mode", "needs tls.rpc = true")
	}
	if t.VerifyServerHostname && !t.EnableRPC {
		bad("tls.verify_server_hostname", "needs tls.rpc = true")
	}
}
