package structs

import (
	"errors"
	"maps"
	"regexp"
	"time"
)

// Built-in node pools: "all" holds every node and "default" the nodes and jobs that name no
// pool. Neither is stored; the state store answers them, so they exist from the first
// index and no write can change or delete them.
const (
	NodePoolAll = "all"
	// NodePoolDefault is DefaultNodePool (structs/job.go), named as upstream's api names it.
	NodePoolDefault = DefaultNodePool
)

// nodePoolNameRe is upstream's pattern for node pool names.
var nodePoolNameRe = regexp.MustCompile(`^[a-zA-Z0-9-_]{1,128}$`)

// NodePool groups nodes; a job is placed only on nodes of its pool.
type NodePool struct {
	Name                   string
	Description            string
	Meta                   map[string]string
	NodeIdentityTTL        time.Duration
	SchedulerConfiguration *NodePoolSchedulerConfiguration
	CreateIndex            uint64
	ModifyIndex            uint64
}

// NodePoolSchedulerConfiguration overrides the cluster's scheduler settings for one pool.
type NodePoolSchedulerConfiguration struct {
	SchedulerAlgorithm            string
	MemoryOversubscriptionEnabled *bool
}

// IsBuiltIn reports whether the pool is one of the two that always exist.
func (p *NodePool) IsBuiltIn() bool { return IsBuiltInNodePool(p.Name) }

// IsBuiltInNodePool reports whether name is "all" or "default".
func IsBuiltInNodePool(name string) bool { return name == NodePoolAll || name == NodePoolDefault }

// Copy returns a deep copy.
func (p *NodePool) Copy() *NodePool {
	return copyWith(p, func(c *NodePool) {
		c.Meta = maps.Clone(p.Meta)
		if p.SchedulerConfiguration != nil {
			sc := *p.SchedulerConfiguration
			if sc.MemoryOversubscriptionEnabled != nil {
				v := *sc.MemoryOversubscriptionEnabled
				sc.MemoryOversubscriptionEnabled = &v
			}
			c.SchedulerConfiguration = &sc
		}
	})
}

// Validate checks a pool a caller wants written. Built-in pools cannot be written.
func (p *NodePool) Validate() error {
	if p.Name == "" {
		return BadRequest("missing node pool name")
	}
	if !nodePoolNameRe.MatchString(p.Name) {
		return BadRequest("invalid Name %q: must match %s", p.Name, nodePoolNameRe)
	}
	if p.IsBuiltIn() {
		return BadRequest("modifying node pool %q is not allowed", p.Name)
	}
	if len(p.Description) > 256 {
		return BadRequest("invalid Description: longer than 256 characters")
	}
	if p.NodeIdentityTTL < 0 {
		return BadRequest("invalid NodeIdentityTTL: must not be negative")
	}
	if sc := p.SchedulerConfiguration; sc != nil {
		switch sc.SchedulerAlgorithm {
		case "", "binpack", "spread":
		default:
			return BadRequest("invalid SchedulerConfiguration.SchedulerAlgorithm %q: must be binpack or spread", sc.SchedulerAlgorithm)
		}
	}
	return nil
}

// NodePoolUpsertRequest creates or updates node pools.
type NodePoolUpsertRequest struct {
	NodePools []*NodePool
	Actor     *Actor
	WriteRequest
}

// NodePoolDeleteRequest deletes node pools by name.
type NodePoolDeleteRequest struct {
	Names []string
	Actor *Actor
	WriteRequest
}

// NodePoolSpecificRequest reads one node pool.
type NodePoolSpecificRequest struct {
	Name string
	QueryOptions
}

// SingleNodePoolResponse answers NodePoolSpecificRequest; NodePool is nil when unknown.
type SingleNodePoolResponse struct {
	NodePool *NodePool
	QueryMeta
}

// NodePoolListRequest lists node pools; Prefix filters by name.
type NodePoolListRequest struct {
	QueryOptions
}

// NodePoolListResponse answers NodePoolListRequest.
type NodePoolListResponse struct {
	NodePools []*NodePool
	QueryMeta
}

// NodePoolEvent is the payload of events on TopicNodePool.
type NodePoolEvent struct {
	NodePool *NodePool
}

// ErrNodePoolNotFound is upstream's text for a missing pool.
var ErrNodePoolNotFound = errors.New("node pool not found")

// NodePoolJobsRequest lists the jobs of one pool, in the request's namespace ("*": all).
type NodePoolJobsRequest struct {
	Name string
	QueryOptions
}

// NodePoolNodesRequest lists the nodes of one pool ("all": every node).
type NodePoolNodesRequest struct {
	Name string
	QueryOptions
}
