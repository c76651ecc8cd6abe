package agent

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net"
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
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
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

	// Plugins holds one entry per plugin name; a later block for the same
	// name replaces the earlier one whole.
	Plugins []*PluginConfig

	// DevMode is set by -dev only; no file key sets it.
	DevMode bool

	// Files lists the configuration files loaded, in merge order.
	Files []string

	// assignments replays what configuration files set, so that Merge can
	// tell "enabled = false" from a key that was never written: both leave
	// the zero value in the exported field. Built once per file by
	// fileConfig.assignments and never mutated afterwards.
	assignments []func(*Config)
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

	JobGCInterval         time.Duration
	JobGCThreshold        time.Duration
	EvalGCThreshold       time.Duration
	JobTrackedVersions    int
	EventBufferSize       int
	EnableEventBroker     bool
	PurgeHistoryRetention time.Duration
	HeartbeatGrace        time.Duration

	AuthoritativeRegion string

	// EncryptKey is the gossip encryption key; it must never be reported
	// by /v1/agent/self.
	EncryptKey string `json:"-"`
}

// ClientConfig configures the client half of the agent.
type ClientConfig struct {
	Enabled           bool
	Servers           []string
	NodeClass         string
	NodePool          string
	Meta              map[string]string
	Options           map[string]string
	DisableRemoteExec bool
	StateDir          string
	AllocDir          string
	NetworkInterface  string

	// HostVolumes holds one entry per volume name; a later block for the
	// same name replaces the earlier one whole.
	HostVolumes []*HostVolumeConfig
}

// HostVolumeConfig is a client host_volume block.
type HostVolumeConfig struct {
	Name     string
	Path     string
	ReadOnly bool
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
			EvalGCThreshold:       time.Hour,
			JobTrackedVersions:    6,
			EventBufferSize:       100,
			EnableEventBroker:     true,
			PurgeHistoryRetention: 720 * time.Hour,
			HeartbeatGrace:        10 * time.Second,
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
		UI: &UIConfig{Enabled: true},
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
// named *.json is read as HCL's JSON syntax, any other file as native HCL.
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

func loadConfigFile(path string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to load config: %w", err)
	}

	// hclparse.Parser caches files by name; a fresh one per load keeps a
	// rewritten file from being served stale.
	parser := hclparse.NewParser()
	var file *hcl.File
	var diags hcl.Diagnostics
	if strings.EqualFold(filepath.Ext(path), ".json") {
		file, diags = parser.ParseJSON(src, path)
	} else {
		file, diags = parser.ParseHCL(src, path)
	}
	if diags.HasErrors() {
		return nil, diagsError(path, diags)
	}

	var fc fileConfig
	if diags := gohcl.DecodeBody(file.Body, nil, &fc); diags.HasErrors() {
		return nil, diagsError(path, diags)
	}
	assignments, diags := fc.assignments()
	if diags.HasErrors() {
		return nil, diagsError(path, diags)
	}

	cfg := &Config{Files: []string{path}, assignments: assignments}
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
// list is replaced whole.
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
	result.assignments = slices.Concat(c.assignments, other.assignments)
	return result
}

// named is implemented by list elements that merge by name.
type named interface{ configName() string }

func (p *PluginConfig) configName() string     { return p.Name }
func (v *HostVolumeConfig) configName() string { return v.Name }

var namedType = reflect.TypeFor[named]()

// mergeStruct overlays the exported, non-zero fields of src onto dst, by
// the rules documented on Merge. Walking by reflection means a field added
// to any config struct merges without a change here.
func mergeStruct(dst, src reflect.Value) {
	for i := range src.NumField() {
		if src.Type().Field(i).IsExported() {
			mergeValue(dst.Field(i), src.Field(i))
		}
	}
}

func mergeValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.New(src.Type().Elem()))
		}
		mergeValue(dst.Elem(), src.Elem())
	case reflect.Struct:
		mergeStruct(dst, src)
	case reflect.Slice:
		if src.Len() == 0 {
			return
		}
		if !src.Type().Elem().Implements(namedType) {
			dst.Set(deepCopy(src))
			return
		}
		for i := range src.Len() {
			item := src.Index(i).Interface().(named)
			dst.Set(reflect.ValueOf(upsertNamed(dst.Interface(), item)))
		}
	case reflect.Map:
		if src.Len() == 0 {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(dst.Type()))
		}
		for iter := src.MapRange(); iter.Next(); {
			dst.SetMapIndex(iter.Key(), deepCopy(iter.Value()))
		}
	default:
		if !src.IsZero() {
			dst.Set(src)
		}
	}
}

// upsertNamed returns a copy of list (a []*PluginConfig or
// []*HostVolumeConfig) with a deep copy of item replacing the entry of the
// same name, or appended.
func upsertNamed(list any, item named) any {
	lv := reflect.ValueOf(list)
	out := reflect.MakeSlice(lv.Type(), 0, lv.Len()+1)
	replaced := false
	cp := deepCopy(reflect.ValueOf(item))
	for i := range lv.Len() {
		if lv.Index(i).Interface().(named).configName() == item.configName() {
			out = reflect.Append(out, cp)
			replaced = true
			continue
		}
		out = reflect.Append(out, lv.Index(i))
	}
	if !replaced {
		out = reflect.Append(out, cp)
	}
	return out.Interface()
}

// deepCopy copies pointers, slices, maps and interfaces recursively. Only
// exported struct fields are deep-copied; unexported ones are copied as is.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(deepCopy(v.Elem()))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(deepCopy(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for iter := v.MapRange(); iter.Next(); {
			out.SetMapIndex(iter.Key(), deepCopy(iter.Value()))
		}
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(deepCopy(v.Elem()))
		return out
	default:
		return v
	}
}

// ensure allocates a nested block on first write, for assignments.
func ensure[T any](p **T) *T {
	if *p == nil {
		*p = new(T)
	}
	return *p
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
	if server.JobTrackedVersions < 1 {
		bad("server.job_tracked_versions", "must be at least 1, got %d", server.JobTrackedVersions)
	}
	if server.JobGCInterval <= 0 {
		bad("server.job_gc_interval", "must be positive, got %s", server.JobGCInterval)
	}
	nonNegativeDur("server.retry_interval", server.RetryInterval)
	nonNegativeDur("server.job_gc_threshold", server.JobGCThreshold)
	nonNegativeDur("server.eval_gc_threshold", server.EvalGCThreshold)
	nonNegativeDur("server.purge_history_retention", server.PurgeHistoryRetention)
	nonNegativeDur("server.heartbeat_grace", server.HeartbeatGrace)

	for _, v := range client.HostVolumes {
		if !filepath.IsAbs(v.Path) {
			bad(fmt.Sprintf("client.host_volume %q path", v.Name), "must be an absolute path, got %q", v.Path)
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

	limits := valueOr(c.Limits, &Limits{})
	nonNegative("limits.http_max_conns_per_client", int64(limits.HTTPMaxConnsPerClient))
	nonNegative("limits.rpc_max_conns_per_client", int64(limits.RPCMaxConnsPerClient))
	nonNegativeDur("limits.https_handshake_timeout", limits.HTTPSHandshakeTimeout)
	nonNegativeDur("limits.rpc_handshake_timeout", limits.RPCHandshakeTimeout)

	return errors.Join(errs...)
}

func valueOr[T any](p, fallback *T) *T {
	if p == nil {
		return fallback
	}
	return p
}

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
	Plugins   []*filePlugin  `hcl:"plugin,block"`
	Telemetry *ignoredBlock  `hcl:"telemetry,block"`
	Consul    []ignoredBlock `hcl:"consul,block"`
	Vault     []ignoredBlock `hcl:"vault,block"`

	// Accepted so existing configurations load, and deliberately ignored:
	// this agent never calls home, so there is no update check to disable.
	DisableUpdateCheck *bool `hcl:"disable_update_check,optional"`
}

// ignoredBlock accepts any content. It is used only for blocks this agent
// accepts from Nomad configurations but has no feature behind: telemetry
// (no metrics sinks), consul and vault (no integrations), the server's
// default_scheduler_config (scheduler configuration is set through the API).
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
	Enabled               *bool          `hcl:"enabled,optional"`
	BootstrapExpect       *int           `hcl:"bootstrap_expect,optional"`
	NumSchedulers         *int           `hcl:"num_schedulers,optional"`
	RetryJoin             *[]string      `hcl:"retry_join,optional"`
	RetryMax              *int           `hcl:"retry_max,optional"`
	RetryInterval         hcl.Expression `hcl:"retry_interval,optional"`
	ServerJoin            *fileJoin      `hcl:"server_join,block"`
	JobGCInterval         hcl.Expression `hcl:"job_gc_interval,optional"`
	JobGCThreshold        hcl.Expression `hcl:"job_gc_threshold,optional"`
	EvalGCThreshold       hcl.Expression `hcl:"eval_gc_threshold,optional"`
	JobTrackedVersions    *int           `hcl:"job_tracked_versions,optional"`
	EventBufferSize       *int           `hcl:"event_buffer_size,optional"`
	EnableEventBroker     *bool          `hcl:"enable_event_broker,optional"`
	PurgeHistoryRetention hcl.Expression `hcl:"purge_history_retention,optional"`
	HeartbeatGrace        hcl.Expression `hcl:"heartbeat_grace,optional"`
	AuthoritativeRegion   *string        `hcl:"authoritative_region,optional"`
	Encrypt               *string        `hcl:"encrypt,optional"`

	// Accepted and ignored: only one Raft protocol is spoken, and scheduler
	// configuration is set through the API (see ignoredBlock).
	RaftProtocol           *int          `hcl:"raft_protocol,optional"`
	DefaultSchedulerConfig *ignoredBlock `hcl:"default_scheduler_config,block"`
}

type fileJoin struct {
	RetryJoin     *[]string      `hcl:"retry_join,optional"`
	RetryMax      *int           `hcl:"retry_max,optional"`
	RetryInterval hcl.Expression `hcl:"retry_interval,optional"`
}

type fileClient struct {
	Enabled           *bool             `hcl:"enabled,optional"`
	Servers           *[]string         `hcl:"servers,optional"`
	NodeClass         *string           `hcl:"node_class,optional"`
	NodePool          *string           `hcl:"node_pool,optional"`
	DisableRemoteExec *bool             `hcl:"disable_remote_exec,optional"`
	StateDir          *string           `hcl:"state_dir,optional"`
	AllocDir          *string           `hcl:"alloc_dir,optional"`
	NetworkInterface  *string           `hcl:"network_interface,optional"`
	HostVolumes       []*fileHostVolume `hcl:"host_volume,block"`

	// Rest holds meta and options, which Nomad configurations write both as
	// blocks (meta { rack = "r1" }) and as arguments (options = { "a.b" =
	// "1" }, the only way to quote a key in HCL 2). gohcl cannot accept both
	// forms for one name, so decodeStringMaps does, and rejects anything else.
	Rest hcl.Body `hcl:",remain"`
}

type fileHostVolume struct {
	Name     string `hcl:"name,label"`
	Path     string `hcl:"path"`
	ReadOnly *bool  `hcl:"read_only,optional"`
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
	// label) styles and links a UI this agent serves as is; it is ignored.
	Rest hcl.Body `hcl:",remain"`
}

type fileLimits struct {
	HTTPMaxConnsPerClient *int           `hcl:"http_max_conns_per_client,optional"`
	RPCMaxConnsPerClient  *int           `hcl:"rpc_max_conns_per_client,optional"`
	HTTPSHandshakeTimeout hcl.Expression `hcl:"https_handshake_timeout,optional"`
	RPCHandshakeTimeout   hcl.Expression `hcl:"rpc_handshake_timeout,optional"`
}

type filePlugin struct {
	Name   string        `hcl:"name,label"`
	Args   *[]string     `hcl:"args,optional"`
	Config *ignoredBlock `hcl:"config,block"` // decoded by bodyToMap
}

// assigner collects one closure per key a file sets; see Config.assignments.
type assigner struct {
	list  []func(*Config)
	diags hcl.Diagnostics
}

func assign[T any](a *assigner, v *T, field func(*Config) *T) {
	if v == nil {
		return
	}
	val := *v
	a.list = append(a.list, func(c *Config) { *field(c) = val })
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

// isAbsent reports whether gohcl left a placeholder for a missing attribute
// (a static null) or the file wrote null.
func isAbsent(expr hcl.Expression) bool {
	if expr == nil {
		return true
	}
	v, diags := expr.Value(nil)
	return !diags.HasErrors() && v.IsNull()
}

// assignments turns a decoded file into the closures that apply it. Every
// exported Config field must be reachable from here; the full-file test
// fails for any that is not.
func (f *fileConfig) assignments() ([]func(*Config), hcl.Diagnostics) {
	a := &assigner{}
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
	if cl := f.Client; cl != nil {
		assignClient(a, cl)
	}
	if acl := f.ACL; acl != nil {
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
	}
	if l := f.Limits; l != nil {
		assign(a, l.HTTPMaxConnsPerClient, func(c *Config) *int { return &ensure(&c.Limits).HTTPMaxConnsPerClient })
		assign(a, l.RPCMaxConnsPerClient, func(c *Config) *int { return &ensure(&c.Limits).RPCMaxConnsPerClient })
		assignDuration(a, l.HTTPSHandshakeTimeout, "https_handshake_timeout",
			func(c *Config) *time.Duration { return &ensure(&c.Limits).HTTPSHandshakeTimeout })
		assignDuration(a, l.RPCHandshakeTimeout, "rpc_handshake_timeout",
			func(c *Config) *time.Duration { return &ensure(&c.Limits).RPCHandshakeTimeout })
	}

	seen := map[string]bool{}
	for _, p := range f.Plugins {
		if seen[p.Name] {
			a.diags = append(a.diags, duplicateDiag(fmt.Sprintf("plugin %q", p.Name)))
			continue
		}
		seen[p.Name] = true
		plugin := &PluginConfig{Name: p.Name}
		if p.Args != nil {
			plugin.Args = slices.Clone(*p.Args)
		}
		if p.Config != nil {
			m, diags := bodyToMap(p.Config.Body)
			a.diags = append(a.diags, diags...)
			plugin.Config = m
		}
		a.list = append(a.list, func(c *Config) {
			c.Plugins = upsertNamed(c.Plugins, plugin).([]*PluginConfig)
		})
	}
	return a.list, a.diags
}

func assignServer(a *assigner, s *fileServer) {
	assign(a, s.Enabled, func(c *Config) *bool { return &ensure(&c.Server).Enabled })
	assign(a, s.BootstrapExpect, func(c *Config) *int { return &ensure(&c.Server).BootstrapExpect })
	assign(a, s.NumSchedulers, func(c *Config) *int { return &ensure(&c.Server).NumSchedulers })
	assign(a, s.JobTrackedVersions, func(c *Config) *int { return &ensure(&c.Server).JobTrackedVersions })
	assign(a, s.EventBufferSize, func(c *Config) *int { return &ensure(&c.Server).EventBufferSize })
	assign(a, s.EnableEventBroker, func(c *Config) *bool { return &ensure(&c.Server).EnableEventBroker })
	assign(a, s.AuthoritativeRegion, func(c *Config) *string { return &ensure(&c.Server).AuthoritativeRegion })
	assign(a, s.Encrypt, func(c *Config) *string { return &ensure(&c.Server).EncryptKey })
	assignDuration(a, s.JobGCInterval, "job_gc_interval",
		func(c *Config) *time.Duration { return &ensure(&c.Server).JobGCInterval })
	assignDuration(a, s.JobGCThreshold, "job_gc_threshold",
		func(c *Config) *time.Duration { return &ensure(&c.Server).JobGCThreshold })
	assignDuration(a, s.EvalGCThreshold, "eval_gc_threshold",
		func(c *Config) *time.Duration { return &ensure(&c.Server).EvalGCThreshold })
	assignDuration(a, s.PurgeHistoryRetention, "purge_history_retention",
		func(c *Config) *time.Duration { return &ensure(&c.Server).PurgeHistoryRetention })
	assignDuration(a, s.HeartbeatGrace, "heartbeat_grace",
		func(c *Config) *time.Duration { return &ensure(&c.Server).HeartbeatGrace })

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

func assignJoin(a *assigner, retryJoin *[]string, retryMax *int, interval hcl.Expression) {
	assignList(a, retryJoin, func(c *Config) *[]string { return &ensure(&c.Server).RetryJoin })
	assign(a, retryMax, func(c *Config) *int { return &ensure(&c.Server).RetryMaxAttempts })
	assignDuration(a, interval, "retry_interval", func(c *Config) *time.Duration { return &ensure(&c.Server).RetryInterval })
}

func assignClient(a *assigner, cl *fileClient) {
	assign(a, cl.Enabled, func(c *Config) *bool { return &ensure(&c.Client).Enabled })
	assignList(a, cl.Servers, func(c *Config) *[]string { return &ensure(&c.Client).Servers })
	assign(a, cl.NodeClass, func(c *Config) *string { return &ensure(&c.Client).NodeClass })
	assign(a, cl.NodePool, func(c *Config) *string { return &ensure(&c.Client).NodePool })
	assign(a, cl.DisableRemoteExec, func(c *Config) *bool { return &ensure(&c.Client).DisableRemoteExec })
	assign(a, cl.StateDir, func(c *Config) *string { return &ensure(&c.Client).StateDir })
	assign(a, cl.AllocDir, func(c *Config) *string { return &ensure(&c.Client).AllocDir })
	assign(a, cl.NetworkInterface, func(c *Config) *string { return &ensure(&c.Client).NetworkInterface })

	kv, diags := decodeStringMaps(cl.Rest, "meta", "options")
	a.diags = append(a.diags, diags...)
	meta, ok := kv["meta"]
	assignMap(a, meta, ok, func(c *Config) *map[string]string { return &ensure(&c.Client).Meta })
	options, ok := kv["options"]
	assignMap(a, options, ok, func(c *Config) *map[string]string { return &ensure(&c.Client).Options })

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
			out[name] = ctyToGo(v)
		}
		return out, diags
	}

	var diags hcl.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(native.Attributes)) {
		v, d := native.Attributes[name].Expr.Value(nil)
		diags = append(diags, d...)
		out[name] = ctyToGo(v)
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

func ctyToGo(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == big.Exact {
			return int(i)
		}
		f, _ := bf.Float64()
		return f
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, ctyToGo(e))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = ctyToGo(e)
		}
		return out
	}
	return nil
}
