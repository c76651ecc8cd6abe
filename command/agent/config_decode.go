package agent

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nomadfork/nomad/jobspec"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// The file* types are the decode targets for gohcl. Scalars are pointers so
// an absent key stays nil, durations are expressions so a bad one can be
// reported at its own position, and a key unknown to these structs is an
// error from gohcl naming the file, line and key.
type fileConfig struct {
	Name             *string `hcl:"name,optional"`
	Region           *string `hcl:"region,optional"`
	Datacenter       *string `hcl:"datacenter,optional"`
	DataDir          *string `hcl:"data_dir,optional"`
	PluginDir        *string `hcl:"plugin_dir,optional"`
	BindAddr         *string `hcl:"bind_addr,optional"`
	LogLevel         *string `hcl:"log_level,optional"`
	LogJSON          *bool   `hcl:"log_json,optional"`
	EnableDebug      *bool   `hcl:"enable_debug,optional"`
	LeaveOnInterrupt *bool   `hcl:"leave_on_interrupt,optional"`
	LeaveOnTerminate *bool   `hcl:"leave_on_terminate,optional"`

	Ports     *fileAddrs     `hcl:"ports,block"`
	Addresses *fileAddrs     `hcl:"addresses,block"`
	Advertise *fileAddrs     `hcl:"advertise,block"`
	Server    *fileServer    `hcl:"server,block"`
	Client    *fileClient    `hcl:"client,block"`
	ACL       *fileACL       `hcl:"acl,block"`
	UI        *fileUI        `hcl:"ui,block"`
	Limits    *fileLimits    `hcl:"limits,block"`
	TLS       *fileTLS       `hcl:"tls,block"`
	Plugins   []*filePlugin  `hcl:"plugin,block"`
	Telemetry *fileTelemetry `hcl:"telemetry,block"`
	Consul    []ignoredBlock `hcl:"consul,block"`
	Vault     []ignoredBlock `hcl:"vault,block"`

	// Accepted so existing configurations load, with a warning: this agent never calls home,
	// so there is no update check to disable.
	DisableUpdateCheck *bool `hcl:"disable_update_check,optional"`
}

// ignoredBlock accepts any content: the consul and vault blocks, which this agent accepts from
// Nomad configurations with a warning (no integrations), and a plugin's config, which
// bodyToMap decodes without a schema.
type ignoredBlock struct {
	Body hcl.Body `hcl:",remain"`
}

// fileAddrs serves ports (numbers) and addresses/advertise (strings): the
// keys are the same, and gohcl converts the values to the field types.
type fileAddrs struct {
	HTTP hcl.Expression `hcl:"http,optional"`
	RPC  hcl.Expression `hcl:"rpc,optional"`
	Serf hcl.Expression `hcl:"serf,optional"`
}

type fileServer struct {
	Enabled               *bool                   `hcl:"enabled,optional"`
	BootstrapExpect       *int                    `hcl:"bootstrap_expect,optional"`
	NumSchedulers         *int                    `hcl:"num_schedulers,optional"`
	RetryJoin             *[]string               `hcl:"retry_join,optional"`
	RetryMax              *int                    `hcl:"retry_max,optional"`
	RetryInterval         hcl.Expression          `hcl:"retry_interval,optional"`
	ServerJoin            *fileJoin               `hcl:"server_join,block"`
	JobGCInterval         hcl.Expression          `hcl:"job_gc_interval,optional"`
	JobGCThreshold        hcl.Expression          `hcl:"job_gc_threshold,optional"`
	NodeGCThreshold       hcl.Expression          `hcl:"node_gc_threshold,optional"`
	EvalGCThreshold       hcl.Expression          `hcl:"eval_gc_threshold,optional"`
	JobTrackedVersions    *int                    `hcl:"job_tracked_versions,optional"`
	JobMaxCount           *int                    `hcl:"job_max_count,optional"`
	JobMaxTotalSize       hcl.Expression          `hcl:"job_max_total_size,optional"`
	EventBufferSize       *int                    `hcl:"event_buffer_size,optional"`
	EnableEventBroker     *bool                   `hcl:"enable_event_broker,optional"`
	PurgeHistoryRetention hcl.Expression          `hcl:"purge_history_retention,optional"`
	HeartbeatGrace        hcl.Expression          `hcl:"heartbeat_grace,optional"`
	RaftSnapshotThreshold *int                    `hcl:"raft_snapshot_threshold,optional"`
	RaftSnapshotInterval  hcl.Expression          `hcl:"raft_snapshot_interval,optional"`
	RaftTrailingLogs      *int                    `hcl:"raft_trailing_logs,optional"`
	AuthoritativeRegion   *string                 `hcl:"authoritative_region,optional"`
	Encrypt               *string                 `hcl:"encrypt,optional"`
	ClientIntroduction    *fileClientIntroduction `hcl:"client_introduction,block"`

	// Accepted with a warning: only one Raft protocol is spoken.
	RaftProtocol           *int                 `hcl:"raft_protocol,optional"`
	DefaultSchedulerConfig *fileSchedulerConfig `hcl:"default_scheduler_config,block"`
}

// fileSchedulerConfig is the server's default_scheduler_config. scheduler_algorithm and
// preemption_config are honoured; the rest (memory_oversubscription_enabled …) is accepted
// with a warning naming each key: the server takes no other default from its configuration.
type fileSchedulerConfig struct {
	SchedulerAlgorithm *string               `hcl:"scheduler_algorithm,optional"`
	PreemptionConfig   *filePreemptionConfig `hcl:"preemption_config,block"`
	Rest               hcl.Body              `hcl:",remain"`
}

type filePreemptionConfig struct {
	SystemSchedulerEnabled   *bool `hcl:"system_scheduler_enabled,optional"`
	SysBatchSchedulerEnabled *bool `hcl:"sysbatch_scheduler_enabled,optional"`
	BatchSchedulerEnabled    *bool `hcl:"batch_scheduler_enabled,optional"`
	ServiceSchedulerEnabled  *bool `hcl:"service_scheduler_enabled,optional"`
}

type fileClientIntroduction struct {
	Enforcement        *string        `hcl:"enforcement,optional"`
	DefaultIdentityTTL hcl.Expression `hcl:"default_identity_ttl,optional"`
	MaxIdentityTTL     hcl.Expression `hcl:"max_identity_ttl,optional"`
}

type fileJoin struct {
	RetryJoin     *[]string      `hcl:"retry_join,optional"`
	RetryMax      *int           `hcl:"retry_max,optional"`
	RetryInterval hcl.Expression `hcl:"retry_interval,optional"`
}

type fileClient struct {
	Enabled           *bool              `hcl:"enabled,optional"`
	Servers           *[]string          `hcl:"servers,optional"`
	ServerJoin        *fileJoin          `hcl:"server_join,block"`
	NodeClass         *string            `hcl:"node_class,optional"`
	NodePool          *string            `hcl:"node_pool,optional"`
	DisableRemoteExec *bool              `hcl:"disable_remote_exec,optional"`
	StateDir          *string            `hcl:"state_dir,optional"`
	AllocDir          *string            `hcl:"alloc_dir,optional"`
	NetworkInterface  *string            `hcl:"network_interface,optional"`
	CNIPath           *string            `hcl:"cni_path,optional"`
	CNIConfigDir      *string            `hcl:"cni_config_dir,optional"`
	BridgeNetworkName *string            `hcl:"bridge_network_name,optional"`
	BridgeSubnet      *string            `hcl:"bridge_network_subnet,optional"`
	HostVolumes       []*fileHostVolume  `hcl:"host_volume,block"`
	HostNetworks      []*fileHostNetwork `hcl:"host_network,block"`
	CPUTotalCompute   *int               `hcl:"cpu_total_compute,optional"`
	MemoryTotalMB     *int               `hcl:"memory_total_mb,optional"`
	MinDynamicPort    *int               `hcl:"min_dynamic_port,optional"`
	MaxDynamicPort    *int               `hcl:"max_dynamic_port,optional"`
	Reserved          *fileReserved      `hcl:"reserved,block"`
	Artifact          *fileArtifact      `hcl:"artifact,block"`

	// Rest holds meta, options and chroot_env, which Nomad configurations write both as
	// blocks (meta { rack = "r1" }) and as arguments (options = { "a.b" =
	// "1" }, the only way to quote a key in HCL 2). gohcl cannot accept both
	// forms for one name, so decodeStringMaps does, and rejects anything else.
	Rest hcl.Body `hcl:",remain"`
}

// fileReserved is the client's reserved block: what the node keeps back from allocations.
type fileReserved struct {
	CPU           *int    `hcl:"cpu,optional"`
	Memory        *int    `hcl:"memory,optional"`
	Disk          *int    `hcl:"disk,optional"`
	ReservedPorts *string `hcl:"reserved_ports,optional"`
}

// fileArtifact is the client's artifact block: the bounds of tasks' artifact downloads. The
// keys of upstream's getters this build has no getter for (gcs, hg, s3) are refused as
// unknown rather than accepted and ignored.
type fileArtifact struct {
	HTTPReadTimeout             hcl.Expression `hcl:"http_read_timeout,optional"`
	HTTPMaxSize                 hcl.Expression `hcl:"http_max_size,optional"`
	GitTimeout                  hcl.Expression `hcl:"git_timeout,optional"`
	DecompressionFileCountLimit *int           `hcl:"decompression_file_count_limit,optional"`
	DecompressionSizeLimit      hcl.Expression `hcl:"decompression_size_limit,optional"`
}

type fileHostVolume struct {
	Name     string `hcl:"name,label"`
	Path     string `hcl:"path"`
	ReadOnly *bool  `hcl:"read_only,optional"`
}

// fileHostNetwork is a client host_network block: a name for the node's addresses within
// cidr and/or on interface, which job ports ask for by that name.
type fileHostNetwork struct {
	Name          string  `hcl:"name,label"`
	CIDR          *string `hcl:"cidr,optional"`
	Interface     *string `hcl:"interface,optional"`
	ReservedPorts *string `hcl:"reserved_ports,optional"`
}

type fileACL struct {
	Enabled               *bool          `hcl:"enabled,optional"`
	TokenTTL              hcl.Expression `hcl:"token_ttl,optional"`
	PolicyTTL             hcl.Expression `hcl:"policy_ttl,optional"`
	RoleTTL               hcl.Expression `hcl:"role_ttl,optional"`
	TokenMinExpirationTTL hcl.Expression `hcl:"token_min_expiration_ttl,optional"`
	TokenMaxExpirationTTL hcl.Expression `hcl:"token_max_expiration_ttl,optional"`
}

type fileUI struct {
	Enabled *bool `hcl:"enabled,optional"`

	// The rest of Nomad's ui block (content_security_policy, consul, vault,
	// label) styles and links a UI this agent serves as is; each key warns.
	Rest hcl.Body `hcl:",remain"`
}

type fileLimits struct {
	HTTPMaxConnsPerClient *int           `hcl:"http_max_conns_per_client,optional"`
	RPCMaxConnsPerClient  *int           `hcl:"rpc_max_conns_per_client,optional"`
	HTTPSHandshakeTimeout hcl.Expression `hcl:"https_handshake_timeout,optional"`
	RPCHandshakeTimeout   hcl.Expression `hcl:"rpc_handshake_timeout,optional"`
}

type fileTLS struct {
	HTTP                 *bool   `hcl:"http,optional"`
	RPC                  *bool   `hcl:"rpc,optional"`
	CAFile               *string `hcl:"ca_file,optional"`
	CertFile             *string `hcl:"cert_file,optional"`
	KeyFile              *string `hcl:"key_file,optional"`
	VerifyServerHostname *bool   `hcl:"verify_server_hostname,optional"`
	VerifyHTTPSClient    *bool   `hcl:"verify_https_client,optional"`
	TLSMinVersion        *string `hcl:"tls_min_version,optional"`
	RPCUpgradeMode       *bool   `hcl:"rpc_upgrade_mode,optional"`
}

type filePlugin struct {
	Name   string        `hcl:"name,label"`
	Args   *[]string     `hcl:"args,optional"`
	Config *ignoredBlock `hcl:"config,block"` // decoded by bodyToMap
}

// builtinDriverPlugins are the plugin names the client reads a block of (clientDrivers); a
// block naming any other plugin has nothing behind it.
var builtinDriverPlugins = []string{"docker", "exec", "mock_driver", "raw_exec"}

// pluginConfigReads lists the config options clientDrivers reads for the plugins whose
// drivers take no options of their own.
var pluginConfigReads = map[string][]string{"raw_exec": {"enabled"}, "mock_driver": {}}

// assigner collects one closure per key a file sets; see Config.assignments.
type assigner struct {
	list  []func(*Config)
	diags hcl.Diagnostics
	// warnings name the keys the file sets that this build accepts and does not act on; see
	// Config.Warnings.
	warnings []string
}

func (a *assigner) warn(format string, args ...any) {
	a.warnings = append(a.warnings, "config: "+fmt.Sprintf(format, args...))
}

// warnIgnored warns about a key the file set (v non-nil) that this build has nothing behind.
func warnIgnored[T any](a *assigner, v *T, key, why string) {
	if v != nil {
		a.warn("%s is ignored: %s", key, why)
	}
}

// warnRemain warns about each key of rest, the ",remain" body of the struct decoded, which
// holds the keys of upstream's block this build accepts and does not act on.
func warnRemain(a *assigner, rest hcl.Body, decoded any, block, why string) {
	for _, name := range remainKeyNames(rest, decoded) {
		a.warn("%s.%s is ignored: %s", block, name, why)
	}
}

// remainKeyNames lists, sorted, the keys a ",remain" body holds. gohcl hands a native body
// over whole with the decoded keys hidden from its methods but not from its fields, so those
// are subtracted by the schema of decoded; a JSON body (any other) has no blocks without a
// schema and lists every remaining key as an attribute.
func remainKeyNames(rest hcl.Body, decoded any) []string {
	if rest == nil {
		return nil
	}
	var names []string
	if native, ok := rest.(*hclsyntax.Body); ok {
		schema, _ := gohcl.ImpliedBodySchema(decoded)
		known := map[string]bool{}
		for _, at := range schema.Attributes {
			known[at.Name] = true
		}
		for _, b := range schema.Blocks {
			known[b.Type] = true
		}
		for name := range native.Attributes {
			if !known[name] {
				names = append(names, name)
			}
		}
		for _, b := range native.Blocks {
			if !known[b.Type] {
				names = append(names, b.Type)
			}
		}
	} else {
		attrs, _ := rest.JustAttributes()
		for name := range attrs {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func assign[T any](a *assigner, v *T, field func(*Config) *T) {
	if v == nil {
		return
	}
	val := *v
	a.list = append(a.list, func(c *Config) { *field(c) = val })
}

// assignRole is for server.enabled and client.enabled: as in Nomad, a file can turn a role on
// but never off, so `-dev` plus a file that says `client { enabled = false }` (the official
// client's test harness writes exactly that) still runs a client. Only the -server and
// -client flags, applied after every file, turn a role off.
func assignRole(a *assigner, v *bool, field func(*Config) *bool) {
	if v == nil || !*v {
		return
	}
	a.list = append(a.list, func(c *Config) { *field(c) = true })
}

func assignList(a *assigner, v *[]string, field func(*Config) *[]string) {
	if v == nil {
		return
	}
	val := slices.Clone(*v)
	a.list = append(a.list, func(c *Config) { *field(c) = slices.Clone(val) })
}

// assignMap merges keys into the target map, copying it first: the map in a
// Config may be shared with the Config it was merged from.
func assignMap(a *assigner, m map[string]string, ok bool, field func(*Config) *map[string]string) {
	if !ok {
		return
	}
	a.list = append(a.list, func(c *Config) {
		dst := field(c)
		merged := maps.Clone(*dst)
		if merged == nil {
			merged = make(map[string]string, len(m))
		}
		maps.Copy(merged, m)
		*dst = merged
	})
}

// assignExpr decodes a non-duration attribute (ports, addresses) into T.
func assignExpr[T any](a *assigner, expr hcl.Expression, field func(*Config) *T) {
	if isAbsent(expr) {
		return
	}
	var val T
	diags := gohcl.DecodeExpression(expr, nil, &val)
	a.diags = append(a.diags, diags...)
	if !diags.HasErrors() {
		assign(a, &val, field)
	}
}

func assignDuration(a *assigner, expr hcl.Expression, key string, field func(*Config) *time.Duration) {
	if isAbsent(expr) {
		return
	}
	v, diags := expr.Value(nil)
	a.diags = append(a.diags, diags...)
	if diags.HasErrors() {
		return
	}
	rng := expr.Range()
	s, err := convert.Convert(v, cty.String)
	if err != nil || !s.IsKnown() {
		a.diags = append(a.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("invalid duration for %s: want a string such as \"5m\"", key),
			Subject:  &rng,
		})
		return
	}
	d, err := time.ParseDuration(s.AsString())
	if err != nil {
		a.diags = append(a.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("invalid duration for %s: %q", key, s.AsString()),
			Subject:  &rng,
		})
		return
	}
	assign(a, &d, field)
}

// assignSize reads a byte size: a number of bytes, or a string of a number and a binary unit
// ("32MiB", "512KB", "1G"; K, M and G all count in 1024s, as upstream's size keys do).
func assignSize(a *assigner, expr hcl.Expression, key string, field func(*Config) *int64) {
	if isAbsent(expr) {
		return
	}
	v, diags := expr.Value(nil)
	a.diags = append(a.diags, diags...)
	if diags.HasErrors() {
		return
	}
	rng := expr.Range()
	s, err := convert.Convert(v, cty.String)
	var n int64
	if err == nil && s.IsKnown() {
		n, err = parseByteSize(s.AsString())
	} else if err == nil {
		err = fmt.Errorf("unknown value")
	}
	if err != nil {
		a.diags = append(a.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("invalid size for %s: want bytes or a string such as \"32MiB\" (%v)", key, err),
			Subject:  &rng,
		})
		return
	}
	assign(a, &n, field)
}

func parseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q does not start with a number", s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, err
	}
	unit := strings.ToUpper(strings.TrimSpace(s[i:]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "I")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit in %q", s)
	}
	if n > (1<<62)>>sh {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n << sh, nil
}

// isAbsent reports whether gohcl left a placeholder for a missing attribute
// (a static null) or the file wrote null.
func isAbsent(expr hcl.Expression) bool {
	if expr == nil {
		return true
	}
	v, diags := expr.Value(nil)
	return !diags.HasErrors() && v.IsNull()
}

// assignments turns a decoded file into the closures that apply it and the warnings about
// the keys it sets that have no effect. Every exported Config field must be reachable from
// here; the full-file test fails for any that is not. Every key the decoder accepts must be
// acted on or warned about; TestConfig_EveryKeyActedOnOrWarned fails for any that is neither.
func (f *fileConfig) assignments() ([]func(*Config), []string, hcl.Diagnostics) {
	a := &assigner{}
	warnIgnored(a, f.PluginDir, "plugin_dir", "this build loads no external plugins; its drivers are built in")
	warnIgnored(a, f.DisableUpdateCheck, "disable_update_check", "this build never checks for updates")
	if len(f.Consul) > 0 {
		a.warn("consul block is ignored: this build has no Consul integration")
	}
	if len(f.Vault) > 0 {
		a.warn("vault block is ignored: this build has no Vault integration")
	}
	assign(a, f.Name, func(c *Config) *string { return &c.Name })
	assign(a, f.Region, func(c *Config) *string { return &c.Region })
	assign(a, f.Datacenter, func(c *Config) *string { return &c.Datacenter })
	assign(a, f.DataDir, func(c *Config) *string { return &c.DataDir })
	assign(a, f.PluginDir, func(c *Config) *string { return &c.PluginDir })
	assign(a, f.BindAddr, func(c *Config) *string { return &c.BindAddr })
	assign(a, f.LogLevel, func(c *Config) *string { return &c.LogLevel })
	assign(a, f.LogJSON, func(c *Config) *bool { return &c.LogJSON })
	assign(a, f.EnableDebug, func(c *Config) *bool { return &c.EnableDebug })
	assign(a, f.LeaveOnInterrupt, func(c *Config) *bool { return &c.LeaveOnInterrupt })
	assign(a, f.LeaveOnTerminate, func(c *Config) *bool { return &c.LeaveOnTerminate })

	if p := f.Ports; p != nil {
		assignExpr(a, p.HTTP, func(c *Config) *int { return &ensure(&c.Ports).HTTP })
		assignExpr(a, p.RPC, func(c *Config) *int { return &ensure(&c.Ports).RPC })
		assignExpr(a, p.Serf, func(c *Config) *int { return &ensure(&c.Ports).Serf })
	}
	if p := f.Addresses; p != nil {
		assignExpr(a, p.HTTP, func(c *Config) *string { return &ensure(&c.Addresses).HTTP })
		assignExpr(a, p.RPC, func(c *Config) *string { return &ensure(&c.Addresses).RPC })
		assignExpr(a, p.Serf, func(c *Config) *string { return &ensure(&c.Addresses).Serf })
	}
	if p := f.Advertise; p != nil {
		assignExpr(a, p.HTTP, func(c *Config) *string { return &ensure(&c.Advertise).HTTP })
		assignExpr(a, p.RPC, func(c *Config) *string { return &ensure(&c.Advertise).RPC })
		assignExpr(a, p.Serf, func(c *Config) *string { return &ensure(&c.Advertise).Serf })
	}
	if s := f.Server; s != nil {
		assignServer(a, s)
	}
	assignTelemetry(a, f.Telemetry)
	if cl := f.Client; cl != nil {
		assignClient(a, cl)
	}
	if acl := f.ACL; acl != nil {
		// Upstream's TTLs bound how long an agent trusts a cached token, policy or role.
		const noTTLCache = "this build keeps no timed ACL cache: servers read tokens, policies and roles from their state on every request"
		for _, ttl := range []struct {
			key  string
			expr hcl.Expression
		}{{"acl.token_ttl", acl.TokenTTL}, {"acl.policy_ttl", acl.PolicyTTL}, {"acl.role_ttl", acl.RoleTTL}} {
			if !isAbsent(ttl.expr) {
				a.warn("%s is ignored: %s", ttl.key, noTTLCache)
			}
		}
		assign(a, acl.Enabled, func(c *Config) *bool { return &ensure(&c.ACL).Enabled })
		assignDuration(a, acl.TokenTTL, "token_ttl", func(c *Config) *time.Duration { return &ensure(&c.ACL).TokenTTL })
		assignDuration(a, acl.PolicyTTL, "policy_ttl", func(c *Config) *time.Duration { return &ensure(&c.ACL).PolicyTTL })
		assignDuration(a, acl.RoleTTL, "role_ttl", func(c *Config) *time.Duration { return &ensure(&c.ACL).RoleTTL })
		assignDuration(a, acl.TokenMinExpirationTTL, "token_min_expiration_ttl",
			func(c *Config) *time.Duration { return &ensure(&c.ACL).TokenMinExpirationTTL })
		assignDuration(a, acl.TokenMaxExpirationTTL, "token_max_expiration_ttl",
			func(c *Config) *time.Duration { return &ensure(&c.ACL).TokenMaxExpirationTTL })
	}
	if ui := f.UI; ui != nil {
		assign(a, ui.Enabled, func(c *Config) *bool { return &ensure(&c.UI).Enabled })
		warnRemain(a, ui.Rest, ui, "ui", "the web UI is served as built")
	}
	if l := f.Limits; l != nil {
		assign(a, l.HTTPMaxConnsPerClient, func(c *Config) *int { return &ensure(&c.Limits).HTTPMaxConnsPerClient })
		assign(a, l.RPCMaxConnsPerClient, func(c *Config) *int { return &ensure(&c.Limits).RPCMaxConnsPerClient })
		assignDuration(a, l.HTTPSHandshakeTimeout, "https_handshake_timeout",
			func(c *Config) *time.Duration { return &ensure(&c.Limits).HTTPSHandshakeTimeout })
		assignDuration(a, l.RPCHandshakeTimeout, "rpc_handshake_timeout",
			func(c *Config) *time.Duration { return &ensure(&c.Limits).RPCHandshakeTimeout })
	}

	if t := f.TLS; t != nil {
		assignTLS(a, t)
	}

	seen := map[string]bool{}
	for _, p := range f.Plugins {
		if seen[p.Name] {
			a.diags = append(a.diags, duplicateDiag(fmt.Sprintf("plugin %q", p.Name)))
			continue
		}
		seen[p.Name] = true
		plugin := &PluginConfig{Name: p.Name}
		if !slices.Contains(builtinDriverPlugins, p.Name) {
			a.warn("plugin %q is ignored: this build has no such driver (its drivers are built in: %s)",
				p.Name, strings.Join(builtinDriverPlugins, ", "))
		}
		if p.Args != nil {
			plugin.Args = slices.Clone(*p.Args)
			a.warn("plugin.args of plugin %q is ignored: its drivers are built in, so there is no plugin binary to pass them to", p.Name)
		}
		if p.Config != nil {
			m, diags := bodyToMap(p.Config.Body)
			a.diags = append(a.diags, diags...)
			plugin.Config = m
			// docker and exec report the options they do not know as the client starts.
			if readsOnly, ok := pluginConfigReads[p.Name]; ok {
				for _, key := range slices.Sorted(maps.Keys(m)) {
					if !slices.Contains(readsOnly, key) {
						a.warn("plugin %q config.%s is ignored: this build reads no such option", p.Name, key)
					}
				}
			}
		}
		a.list = append(a.list, func(c *Config) {
			c.Plugins = upsertNamed(c.Plugins, plugin).([]*PluginConfig)
		})
	}
	return a.list, a.warnings, a.diags
}

func assignServer(a *assigner, s *fileServer) {
	warnIgnored(a, s.RaftProtocol, "server.raft_protocol", "this build speaks only Raft protocol 3")
	warnIgnored(a, s.AuthoritativeRegion, "server.authoritative_region", "this build does not replicate ACLs between regions")
	assignRole(a, s.Enabled, func(c *Config) *bool { return &ensure(&c.Server).Enabled })
	assign(a, s.BootstrapExpect, func(c *Config) *int { return &ensure(&c.Server).BootstrapExpect })
	assign(a, s.NumSchedulers, func(c *Config) *int { return &ensure(&c.Server).NumSchedulers })
	assign(a, s.JobTrackedVersions, func(c *Config) *int { return &ensure(&c.Server).JobTrackedVersions })
	assign(a, s.JobMaxCount, func(c *Config) *int { return &ensure(&c.Server).JobMaxCount })
	assignSize(a, s.JobMaxTotalSize, "job_max_total_size", func(c *Config) *int64 { return &ensure(&c.Server).JobMaxTotalSize })
	if sc := s.DefaultSchedulerConfig; sc != nil {
		warnRemain(a, sc.Rest, sc, "server.default_scheduler_config",
			"only scheduler_algorithm and preemption_config are read from the file; set the rest with `nomad operator scheduler set-config`")
		assign(a, sc.SchedulerAlgorithm, func(c *Config) *string { return &ensure(&c.Server).SchedulerAlgorithm })
		if p := sc.PreemptionConfig; p != nil {
			assign(a, p.SystemSchedulerEnabled, func(c *Config) *bool { return &ensure(&c.Server).PreemptionConfig.SystemSchedulerEnabled })
			assign(a, p.SysBatchSchedulerEnabled, func(c *Config) *bool { return &ensure(&c.Server).PreemptionConfig.SysBatchSchedulerEnabled })
			assign(a, p.BatchSchedulerEnabled, func(c *Config) *bool { return &ensure(&c.Server).PreemptionConfig.BatchSchedulerEnabled })
			assign(a, p.ServiceSchedulerEnabled, func(c *Config) *bool { return &ensure(&c.Server).PreemptionConfig.ServiceSchedulerEnabled })
		}
	}
	assign(a, s.EventBufferSize, func(c *Config) *int { return &ensure(&c.Server).EventBufferSize })
	assign(a, s.EnableEventBroker, func(c *Config) *bool { return &ensure(&c.Server).EnableEventBroker })
	assign(a, s.AuthoritativeRegion, func(c *Config) *string { return &ensure(&c.Server).AuthoritativeRegion })
	assign(a, s.Encrypt, func(c *Config) *string { return &ensure(&c.Server).EncryptKey })
	assignDuration(a, s.JobGCInterval, "job_gc_interval",
		func(c *Config) *time.Duration { return &ensure(&c.Server).JobGCInterval })
	assignDuration(a, s.JobGCThreshold, "job_gc_threshold",
		func(c *Config) *time.Duration { return &ensure(&c.Server).JobGCThreshold })
	assignDuration(a, s.NodeGCThreshold, "node_gc_threshold",
		func(c *Config) *time.Duration { return &ensure(&c.Server).NodeGCThreshold })
	assignDuration(a, s.EvalGCThreshold, "eval_gc_threshold",
		func(c *Config) *time.Duration { return &ensure(&c.Server).EvalGCThreshold })
	assignDuration(a, s.PurgeHistoryRetention, "purge_history_retention",
		func(c *Config) *time.Duration { return &ensure(&c.Server).PurgeHistoryRetention })
	assignDuration(a, s.HeartbeatGrace, "heartbeat_grace",
		func(c *Config) *time.Duration { return &ensure(&c.Server).HeartbeatGrace })
	assign(a, s.RaftSnapshotThreshold, func(c *Config) *int { return &ensure(&c.Server).RaftSnapshotThreshold })
	assignDuration(a, s.RaftSnapshotInterval, "raft_snapshot_interval",
		func(c *Config) *time.Duration { return &ensure(&c.Server).RaftSnapshotInterval })
	assign(a, s.RaftTrailingLogs, func(c *Config) *int { return &ensure(&c.Server).RaftTrailingLogs })
	if ci := s.ClientIntroduction; ci != nil {
		assign(a, ci.Enforcement, func(c *Config) *string { return &ensure(&c.Server).ClientIntroduction.Enforcement })
		assignDuration(a, ci.DefaultIdentityTTL, "client_introduction.default_identity_ttl",
			func(c *Config) *time.Duration { return &ensure(&c.Server).ClientIntroduction.DefaultIdentityTTL })
		assignDuration(a, ci.MaxIdentityTTL, "client_introduction.max_identity_ttl",
			func(c *Config) *time.Duration { return &ensure(&c.Server).ClientIntroduction.MaxIdentityTTL })
	}

	// The server_join block is Nomad's newer spelling of the same three keys.
	assignJoin(a, s.RetryJoin, s.RetryMax, s.RetryInterval)
	if j := s.ServerJoin; j != nil {
		if s.RetryJoin != nil && j.RetryJoin != nil {
			a.diags = append(a.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "retry_join is set in both server and server.server_join; use only server_join",
			})
		}
		assignJoin(a, j.RetryJoin, j.RetryMax, j.RetryInterval)
	}
}

func assignTLS(a *assigner, t *fileTLS) {
	assign(a, t.HTTP, func(c *Config) *bool { return &ensure(&c.TLS).EnableHTTP })
	assign(a, t.RPC, func(c *Config) *bool { return &ensure(&c.TLS).EnableRPC })
	assign(a, t.CAFile, func(c *Config) *string { return &ensure(&c.TLS).CAFile })
	assign(a, t.CertFile, func(c *Config) *string { return &ensure(&c.TLS).CertFile })
	assign(a, t.KeyFile, func(c *Config) *string { return &ensure(&c.TLS).KeyFile })
	assign(a, t.VerifyServerHostname, func(c *Config) *bool { return &ensure(&c.TLS).VerifyServerHostname })
	assign(a, t.VerifyHTTPSClient, func(c *Config) *bool { return &ensure(&c.TLS).VerifyHTTPSClient })
	assign(a, t.TLSMinVersion, func(c *Config) *string { return &ensure(&c.TLS).TLSMinVersion })
	assign(a, t.RPCUpgradeMode, func(c *Config) *bool { return &ensure(&c.TLS).RPCUpgradeMode })
}

func assignJoin(a *assigner, retryJoin *[]string, retryMax *int, interval hcl.Expression) {
	assignList(a, retryJoin, func(c *Config) *[]string { return &ensure(&c.Server).RetryJoin })
	assign(a, retryMax, func(c *Config) *int { return &ensure(&c.Server).RetryMaxAttempts })
	assignDuration(a, interval, "retry_interval", func(c *Config) *time.Duration { return &ensure(&c.Server).RetryInterval })
}

func assignClient(a *assigner, cl *fileClient) {
	assignRole(a, cl.Enabled, func(c *Config) *bool { return &ensure(&c.Client).Enabled })
	assignList(a, cl.Servers, func(c *Config) *[]string { return &ensure(&c.Client).Servers })
	if j := cl.ServerJoin; j != nil {
		assignList(a, j.RetryJoin, func(c *Config) *[]string { return &ensure(&c.Client).RetryJoin })
		// A client tries its servers in turn for as long as it runs; the server's retry
		// bounds have no meaning for it yet, so they are refused rather than ignored.
		if j.RetryMax != nil || !isAbsent(j.RetryInterval) {
			a.diags = append(a.diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "client.server_join supports only retry_join: retry_max and retry_interval are not supported for clients",
			})
		}
	}
	assign(a, cl.NodeClass, func(c *Config) *string { return &ensure(&c.Client).NodeClass })
	assign(a, cl.NodePool, func(c *Config) *string { return &ensure(&c.Client).NodePool })
	assign(a, cl.DisableRemoteExec, func(c *Config) *bool { return &ensure(&c.Client).DisableRemoteExec })
	assign(a, cl.StateDir, func(c *Config) *string { return &ensure(&c.Client).StateDir })
	assign(a, cl.AllocDir, func(c *Config) *string { return &ensure(&c.Client).AllocDir })
	assign(a, cl.NetworkInterface, func(c *Config) *string { return &ensure(&c.Client).NetworkInterface })
	assign(a, cl.CNIPath, func(c *Config) *string { return &ensure(&c.Client).CNIPath })
	assign(a, cl.BridgeNetworkName, func(c *Config) *string { return &ensure(&c.Client).BridgeNetworkName })
	assign(a, cl.BridgeSubnet, func(c *Config) *string { return &ensure(&c.Client).BridgeNetworkSubnet })
	if cl.CNIConfigDir != nil {
		// Upstream reads CNI networks of its own there for `mode = "cni/<name>"`, which
		// this build does not run: only bridge mode is built.
		a.warn("client.cni_config_dir is ignored: only network mode \"bridge\" is built, not \"cni/<name>\" networks")
	}
	assign(a, cl.CPUTotalCompute, func(c *Config) *int { return &ensure(&c.Client).CPUTotalCompute })
	assign(a, cl.MemoryTotalMB, func(c *Config) *int { return &ensure(&c.Client).MemoryTotalMB })
	assign(a, cl.MinDynamicPort, func(c *Config) *int { return &ensure(&c.Client).MinDynamicPort })
	assign(a, cl.MaxDynamicPort, func(c *Config) *int { return &ensure(&c.Client).MaxDynamicPort })
	if r := cl.Reserved; r != nil {
		assign(a, r.CPU, func(c *Config) *int { return &ensure(&ensure(&c.Client).Reserved).CPU })
		assign(a, r.Memory, func(c *Config) *int { return &ensure(&ensure(&c.Client).Reserved).MemoryMB })
		assign(a, r.Disk, func(c *Config) *int { return &ensure(&ensure(&c.Client).Reserved).DiskMB })
		assign(a, r.ReservedPorts, func(c *Config) *string { return &ensure(&ensure(&c.Client).Reserved).ReservedPorts })
	}

	if art := cl.Artifact; art != nil {
		assignDuration(a, art.HTTPReadTimeout, "artifact.http_read_timeout", func(c *Config) *time.Duration {
			return &ensure(&ensure(&c.Client).Artifact).HTTPReadTimeout
		})
		assignSize(a, art.HTTPMaxSize, "artifact.http_max_size", func(c *Config) *int64 {
			return &ensure(&ensure(&c.Client).Artifact).HTTPMaxSize
		})
		assignDuration(a, art.GitTimeout, "artifact.git_timeout", func(c *Config) *time.Duration {
			return &ensure(&ensure(&c.Client).Artifact).GitTimeout
		})
		assign(a, art.DecompressionFileCountLimit, func(c *Config) *int {
			return &ensure(&ensure(&c.Client).Artifact).DecompressionFileCountLimit
		})
		assignSize(a, art.DecompressionSizeLimit, "artifact.decompression_size_limit", func(c *Config) *int64 {
			return &ensure(&ensure(&c.Client).Artifact).DecompressionSizeLimit
		})
	}

	kv, diags := decodeStringMaps(cl.Rest, "meta", "options", "chroot_env")
	a.diags = append(a.diags, diags...)
	meta, ok := kv["meta"]
	assignMap(a, meta, ok, func(c *Config) *map[string]string { return &ensure(&c.Client).Meta })
	options, ok := kv["options"]
	assignMap(a, options, ok, func(c *Config) *map[string]string { return &ensure(&c.Client).Options })
	chrootEnv, ok := kv["chroot_env"]
	assignMap(a, chrootEnv, ok, func(c *Config) *map[string]string { return &ensure(&c.Client).ChrootEnv })

	seen := map[string]bool{}
	for _, v := range cl.HostVolumes {
		if seen[v.Name] {
			a.diags = append(a.diags, duplicateDiag(fmt.Sprintf("client host_volume %q", v.Name)))
			continue
		}
		seen[v.Name] = true
		vol := &HostVolumeConfig{Name: v.Name, Path: v.Path, ReadOnly: v.ReadOnly != nil && *v.ReadOnly}
		a.list = append(a.list, func(c *Config) {
			ensure(&c.Client).HostVolumes = upsertNamed(ensure(&c.Client).HostVolumes, vol).([]*HostVolumeConfig)
		})
	}
	seenNet := map[string]bool{}
	for _, hn := range cl.HostNetworks {
		if seenNet[hn.Name] {
			a.diags = append(a.diags, duplicateDiag(fmt.Sprintf("client host_network %q", hn.Name)))
			continue
		}
		seenNet[hn.Name] = true
		net := &HostNetworkConfig{Name: hn.Name}
		for _, f := range []struct {
			from *string
			to   *string
		}{{hn.CIDR, &net.CIDR}, {hn.Interface, &net.Interface}, {hn.ReservedPorts, &net.ReservedPorts}} {
			if f.from != nil {
				*f.to = *f.from
			}
		}
		a.list = append(a.list, func(c *Config) {
			ensure(&c.Client).HostNetworks = upsertNamed(ensure(&c.Client).HostNetworks, net).([]*HostNetworkConfig)
		})
	}
}

func duplicateDiag(what string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("duplicate %s block", what),
	}
}

// decodeStringMaps reads each named map of strings from body, written either
// as an argument or as a block of arguments, and reports any other content
// of body as unsupported.
func decodeStringMaps(body hcl.Body, names ...string) (map[string]map[string]string, hcl.Diagnostics) {
	attrSchema := &hcl.BodySchema{}
	blockSchema := &hcl.BodySchema{}
	for _, n := range names {
		attrSchema.Attributes = append(attrSchema.Attributes, hcl.AttributeSchema{Name: n})
		blockSchema.Blocks = append(blockSchema.Blocks, hcl.BlockHeaderSchema{Type: n})
	}
	// Arguments first: in JSON an object is read as whatever the schema asks
	// for, and an argument is the natural reading.
	attrs, rest, diags := body.PartialContent(attrSchema)
	blocks, moreDiags := rest.Content(blockSchema)
	diags = append(diags, moreDiags...)

	out := map[string]map[string]string{}
	for _, n := range names {
		attr, ok := attrs.Attributes[n]
		if !ok {
			continue
		}
		var m map[string]string
		diags = append(diags, gohcl.DecodeExpression(attr.Expr, nil, &m)...)
		out[n] = m
	}
	for _, b := range blocks.Blocks {
		if _, dup := out[b.Type]; dup {
			rng := b.DefRange
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("duplicate %s", b.Type),
				Detail:   fmt.Sprintf("%s is already defined in this block; define it once", b.Type),
				Subject:  &rng,
			})
			continue
		}
		battrs, d := b.Body.JustAttributes()
		diags = append(diags, d...)
		m := make(map[string]string, len(battrs))
		for name, attr := range battrs {
			var s string
			diags = append(diags, gohcl.DecodeExpression(attr.Expr, nil, &s)...)
			m[name] = s
		}
		out[b.Type] = m
	}
	return out, diags
}

// bodyToMap decodes a schema-less body (plugin config) into Go values, as
// described on PluginConfig. Native HCL bodies are walked through their syntax
// tree because JustAttributes rejects nested blocks; JSON bodies have no
// blocks without a schema, so JustAttributes reads them whole.
func bodyToMap(body hcl.Body) (map[string]any, hcl.Diagnostics) {
	out := map[string]any{}
	native, ok := body.(*hclsyntax.Body)
	if !ok {
		attrs, diags := body.JustAttributes()
		for _, name := range slices.Sorted(maps.Keys(attrs)) {
			v, d := attrs[name].Expr.Value(nil)
			diags = append(diags, d...)
			out[name] = jobspec.CtyToGo(v)
		}
		return out, diags
	}

	var diags hcl.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(native.Attributes)) {
		v, d := native.Attributes[name].Expr.Value(nil)
		diags = append(diags, d...)
		out[name] = jobspec.CtyToGo(v)
	}
	blocks := map[string][]any{}
	var order []string
	for _, b := range native.Blocks {
		if _, clash := native.Attributes[b.Type]; clash {
			rng := b.DefRange()
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("duplicate %s", b.Type),
				Detail:   fmt.Sprintf("%s is set both as an argument and as a block", b.Type),
				Subject:  &rng,
			})
			continue
		}
		m, d := bodyToMap(b.Body)
		diags = append(diags, d...)
		var val any = m
		for i := len(b.Labels) - 1; i >= 0; i-- {
			val = map[string]any{b.Labels[i]: val}
		}
		if _, ok := blocks[b.Type]; !ok {
			order = append(order, b.Type)
		}
		blocks[b.Type] = append(blocks[b.Type], val)
	}
	for _, t := range order {
		if len(blocks[t]) == 1 {
			out[t] = blocks[t][0]
		} else {
			out[t] = blocks[t]
		}
	}
	return out, diags
}
