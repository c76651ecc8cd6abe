package client

import (
	"github.com/hashicorp/nomad/api"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/client/artifact"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/fingerprint"
	"github.com/nomadfork/nomad/client/template"
	"github.com/nomadfork/nomad/structs"
)

// Servers is how the client reaches the servers. Each method is the RPC of the same shape;
// the agent implements it with in-process calls, a remote client would with RPC.
type Servers interface {
	RegisterNode(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error
	UpdateNodeStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error
	NodeAllocations(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error
	UpdateAllocations(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error
	UpsertServiceRegistrations(args *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error
	DeleteServiceRegistration(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error
	// SignIdentities fetches workload identities of the node's own allocations.
	SignIdentities(args *structs.AllocIdentitiesRequest, reply *structs.AllocIdentitiesResponse) error
	// SignNodeIdentity fetches a fresh identity of the node.
	SignNodeIdentity(args *structs.NodeIdentitySignRequest, reply *structs.NodeIdentitySignResponse) error
	// MigrateAllocData fetches a chunk of the disk of the allocation one of the node's
	// allocations replaces, from the node that ran it.
	MigrateAllocData(args *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error
}

// Config configures a client.
type Config struct {
	// NodeID and SecretID identify the node; New makes them up when empty (StateDir keeps
	// them across restarts when set).
	NodeID   string
	SecretID string
	Name     string
	Region   string
	// Datacenter, NodePool, NodeClass and Meta describe the node to the scheduler.
	Datacenter string
	NodePool   string
	NodeClass  string
	Meta       map[string]string
	// HostVolumes are the client's host_volume blocks, by name: the node advertises them so
	// that the scheduler places a group that asks for one only where it exists.
	HostVolumes map[string]*api.HostVolumeInfo
	// HTTPAddr is the agent's advertised HTTP address.
	HTTPAddr string
	// TemplateAPI is where templates' Nomad functions (nomadVar, nomadService, ...) read the
	// API, with the task's workload identity and namespace filled in per task. An empty
	// Address fails every template that calls one.
	TemplateAPI template.NomadAPI
	// Artifact bounds the downloads of tasks' artifact blocks (the agent's client artifact
	// block); zero fields take upstream's defaults.
	Artifact artifact.Config
	// Version is reported as the node attribute nomad.version.
	Version string

	// StateDir keeps the node's identity; empty keeps nothing.
	StateDir string
	// IntroToken is the client introduction token the node shows the servers when they do
	// not know it yet (nomad node intro create). Empty reads <StateDir>/intro_token.jwt, if
	// there is one. It is a secret: never logged, never reported.
	IntroToken string
	// AllocDir holds one directory per allocation: <AllocDir>/<alloc ID>/<task>/ is a task's
	// working directory, <AllocDir>/<alloc ID>/alloc/logs/ its output.
	AllocDir string

	// Resources is what the client block says about the node's resources (reserved,
	// cpu_total_compute, memory_total_mb, the dynamic port range); AllocDir and
	// NetworkInterface in it are filled from the fields here.
	Resources fingerprint.Config
	// Sources are where fingerprinting reads the machine; nil reads the host.
	Sources          *fingerprint.Sources
	NetworkInterface string
	// CNIPath (colon-separated directories), BridgeName and BridgeSubnet configure bridge
	// networking (alloc_network.go); empty for upstream's defaults.
	CNIPath      string
	BridgeName   string
	BridgeSubnet string
	// NetNSDir is where allocations' network namespaces are bind-mounted ("" for
	// /var/run/netns, where `ip netns` lists them).
	NetNSDir string

	// Drivers are the task drivers this node offers.
	Drivers []drivers.Driver
	// DisableRemoteExec refuses every command run in a task (alloc exec).
	DisableRemoteExec bool
	// Options are the agent's `client { options }`: of them the client reads user.denylist
	// and user.checked_drivers (task_user.go).
	Options map[string]string

	// MaxQueryTime bounds each blocking read of the node's allocations.
	MaxQueryTime time.Duration
	// RetryInterval is how long the client waits after a failed call to the servers.
	RetryInterval time.Duration

	Logger hclog.Logger

	// PublishNodeMetrics and PublishAllocationMetrics are telemetry's publish_node_metrics
	// and publish_allocation_metrics: the host's and each task's resource gauges.
	PublishNodeMetrics       bool
	PublishAllocationMetrics bool
}

func (c *Config) withDefaults() *Config {
	out := *c
	if out.Logger == nil {
		out.Logger = hclog.NewNullLogger()
	}
	if out.Datacenter == "" {
		out.Datacenter = "dc1"
	}
	if out.NodePool == "" {
		out.NodePool = structs.DefaultNodePool
	}
	if out.Region == "" {
		out.Region = structs.DefaultRegion
	}
	if out.MaxQueryTime <= 0 {
		out.MaxQueryTime = 5 * time.Minute
	}
	if out.RetryInterval <= 0 {
		out.RetryInterval = time.Second
	}
	return &out
}
