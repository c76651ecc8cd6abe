package structs

import (
	"maps"
	"net"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Node statuses.
const (
	NodeStatusInit         = "initializing"
	NodeStatusReady        = "ready"
	NodeStatusDown         = "down"
	NodeStatusDisconnected = "disconnected"
)

// Scheduling eligibility.
const (
	NodeSchedulingEligible   = "eligible"
	NodeSchedulingIneligible = "ineligible"
)

// ValidNodeStatus reports whether status is one a node may be set to.
func ValidNodeStatus(status string) bool {
	switch status {
	case NodeStatusInit, NodeStatusReady, NodeStatusDown, NodeStatusDisconnected:
		return true
	}
	return false
}

// DriverInfo is what a client found out about one task driver.
type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
}

// Node is a client machine that runs allocations. SecretID authenticates the client's own
// calls; it is stored but never leaves the servers: every answer and event carries Sanitized().
type Node struct {
	ID                    string
	SecretID              string
	Datacenter            string
	Name                  string
	HTTPAddr              string
	TLSEnabled            bool
	Attributes            map[string]string
	NodeResources         *NodeResources
	ReservedResources     *api.NodeReservedResources
	Links                 map[string]string
	Meta                  map[string]string
	NodeClass             string
	NodePool              string
	CgroupParent          string
	Drain                 bool
	DrainStrategy         *api.DrainStrategy
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	// StatusUpdatedAt is unix seconds, as upstream.
	StatusUpdatedAt int64
	Events          []*api.NodeEvent
	Drivers         map[string]*DriverInfo
	HostVolumes     map[string]*api.HostVolumeInfo
	HostNetworks    map[string]*api.HostNetworkInfo
	LastDrain       *api.DrainMetadata
	CreateIndex     uint64
	ModifyIndex     uint64
	NodeMaxAllocs   int
}

// Copy returns a copy whose top-level fields and maps may be changed.
func (n *Node) Copy() *Node {
	return copyWith(n, func(c *Node) {
		c.Attributes = maps.Clone(n.Attributes)
		c.Meta = maps.Clone(n.Meta)
		c.Links = maps.Clone(n.Links)
		c.Drivers = maps.Clone(n.Drivers)
		c.Events = append([]*api.NodeEvent(nil), n.Events...)
	})
}

// Sanitized returns a copy without the SecretID, for anything a caller or subscriber sees.
func (n *Node) Sanitized() *Node {
	return copyWith(n, func(c *Node) {
		c.SecretID = ""
	})
}

// Schedulable reports whether new allocations may be placed on the node.
func (n *Node) Schedulable() bool {
	return n.Status == NodeStatusReady && !n.Drain && n.SchedulingEligibility != NodeSchedulingIneligible
}

// HasDriver reports whether the node has the driver, detected and healthy.
func (n *Node) HasDriver(name string) bool {
	d, ok := n.Drivers[name]
	return ok && d != nil && d.Detected && d.Healthy
}

// NodeListStub is the list form of a node, the shape of upstream's NodeListStub.
type NodeListStub struct {
	Address               string
	ID                    string
	Attributes            map[string]string `json:",omitempty"`
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Drivers               map[string]*DriverInfo
	NodeResources         *NodeResources             `json:",omitempty"`
	ReservedResources     *api.NodeReservedResources `json:",omitempty"`
	LastDrain             *api.DrainMetadata
	CreateIndex           uint64
	ModifyIndex           uint64
}

// Stub builds the list form; withOS adds the attributes, withResources the node's resources
// and what it reserves.
func (n *Node) Stub(withOS, withResources bool) *NodeListStub {
	addr := n.HTTPAddr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	s := &NodeListStub{
		Address:               addr,
		ID:                    n.ID,
		Datacenter:            n.Datacenter,
		Name:                  n.Name,
		NodeClass:             n.NodeClass,
		NodePool:              n.NodePool,
		Version:               n.Attributes["nomad.version"],
		Drain:                 n.Drain,
		SchedulingEligibility: n.SchedulingEligibility,
		Status:                n.Status,
		StatusDescription:     n.StatusDescription,
		Drivers:               n.Drivers,
		LastDrain:             n.LastDrain,
		CreateIndex:           n.CreateIndex,
		ModifyIndex:           n.ModifyIndex,
	}
	if withOS {
		s.Attributes = n.Attributes
	}
	if withResources {
		s.NodeResources, s.ReservedResources = n.NodeResources, n.ReservedResources
	}
	return s
}

// NodeStreamEvent is the payload of events on TopicNode; its node is always sanitized.
type NodeStreamEvent struct {
	Node *Node
}

// NodeRegisterRequest registers or re-registers a node. The leader fixes StatusUpdatedAt and
// the evaluations the registration causes before the apply.
type NodeRegisterRequest struct {
	Node  *Node
	Evals []*Evaluation
	// IntroToken introduces a node the servers do not know yet: a client introduction token,
	// or an identity the servers signed for this node before. It is a secret: the leader
	// clears it before the request reaches Raft.
	IntroToken string `codec:"IntroToken" json:"-"`
	// PlainConn says the registration came over a client connection without TLS while the
	// server has TLS on (rpc_upgrade_mode). The server that took the connection sets it,
	// whatever the client sent, and it travels to the leader with the forwarded call.
	PlainConn bool `codec:"PlainConn" json:"-"`
	WriteRequest
}

// NodeUpdateStatusRequest changes a node's status; a client sends it as its heartbeat, which
// only reaches Raft when the status changes. The leader fixes UpdatedAt and Evals (for the
// jobs a down node's allocations belong to) before the apply.
type NodeUpdateStatusRequest struct {
	NodeID    string
	Status    string
	UpdatedAt int64
	Evals     []*Evaluation
	WriteRequest
}

// NodeUpdateResponse answers register and status updates.
type NodeUpdateResponse struct {
	// HeartbeatTTL is how long the leader waits for the next heartbeat before it marks the
	// node down.
	HeartbeatTTL    time.Duration
	EvalIDs         []string
	EvalCreateIndex uint64
	NodeModifyIndex uint64
	QueryMeta
}

// NodeSpecificRequest reads one node or its allocations.
type NodeSpecificRequest struct {
	NodeID string
	QueryOptions
}

// SingleNodeResponse answers a node read; Node is nil when it does not exist.
type SingleNodeResponse struct {
	Node *Node
	QueryMeta
}

// NodeListRequest lists nodes, filtered by ID prefix. WithOS adds their attributes and
// WithResources their resources (?os=true, ?resources=true).
type NodeListRequest struct {
	WithOS        bool
	WithResources bool
	QueryOptions
}

// NodeListResponse answers NodeListRequest.
type NodeListResponse struct {
	Nodes []*NodeListStub
	QueryMeta
}

// NodeAllocsResponse answers a read of a node's allocations, with their jobs.
type NodeAllocsResponse struct {
	Allocs []*Allocation
	QueryMeta
}
