package scheduler

import (
	"path"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Keys of ConstraintFiltered for the checks that are not constraints, as upstream's.
const (
	filterMissingDrivers = "missing drivers"
	filterMissingDevices = "missing devices"
	filterHostVolumes    = "missing compatible host volumes"
	// filterBridgeNetwork keeps upstream's "missing network" prefix and names the mode.
	filterBridgeNetwork = "missing network: bridge"
)

// candidate is a node that passed the group's static checks, with what ranking reads of it
// that does not change while the plan is made.
type candidate struct {
	node *structs.Node
	capy capacity
	// u is the node's usage, looked up on first use.
	u *usage
	// on and load mirror g.onNode and st.load for the node, read for every placement; place
	// keeps both up to date. (Set when the group's placements start: every stop and update
	// of a service group is decided before.)
	on, load int
	// affinity is the node's affinity score, hasAffinity false when the group has none.
	affinity    float64
	hasAffinity bool
	// spreadVals are the node's values of each spread attribute, "" and spreadSet false
	// when it has none.
	spreadVals []string
	spreadSet  []bool
	// spreadKey joins spreadVals: candidates with the same key get the same spread score.
	spreadKey string
}

// computeFeasible filters the nodes once per group, on first use, and records why each was
// left out. Nodes that are not ready, or outside the job's datacenters or node pool, are not
// evaluated at all, as upstream: they are not candidates for this job.
func (g *group) computeFeasible() {
	if g.metric != nil {
		return
	}
	g.ask = newAsk(g.tg)
	g.collectConstraints()
	g.metric = &api.AllocationMetric{
		NodePool:           g.job.NodePool,
		NodesAvailable:     map[string]int{},
		ClassFiltered:      map[string]int{},
		ConstraintFiltered: map[string]int{},
		ClassExhausted:     map[string]int{},
		DimensionExhausted: map[string]int{},
	}
	seen := make([]map[string]bool, len(g.spreads))
	for i := range seen {
		seen[i] = map[string]bool{}
	}
	for _, n := range g.st.nodes {
		if !inDatacenters(g.job.Datacenters, n.Datacenter) {
			continue
		}
		if !n.Schedulable() {
			continue
		}
		// As upstream: ready, eligible and not draining nodes of the job's datacenters,
		// whatever their pool.
		g.metric.NodesAvailable[n.Datacenter]++
		if !inPool(g.job.NodePool, n.NodePool) {
			continue
		}
		g.metric.NodesInPool++
		g.metric.NodesEvaluated++
		if reason := g.infeasible(n); reason != "" {
			g.metric.NodesFiltered++
			g.metric.ConstraintFiltered[reason]++
			if n.NodeClass != "" {
				g.metric.ClassFiltered[n.NodeClass]++
			}
			continue
		}
		c := &candidate{node: n, capy: nodeCapacity(n), on: g.onNode[n.ID], load: g.st.load[n.ID]}
		g.rankStatic(c)
		for i := range g.spreads {
			if c.spreadSet[i] && !seen[i][c.spreadVals[i]] {
				seen[i][c.spreadVals[i]] = true
			}
		}
		g.cands = append(g.cands, c)
	}
	g.spreadVals = make([]int, len(g.spreads))
	for i := range g.spreads {
		g.spreadVals[i] = len(seen[i])
	}
}

// collectConstraints gathers the job's, the group's and the tasks' constraints, affinities
// and spreads; distinct_* constraints remember whether they are the job's (counted over the
// whole job) or the group's.
func (g *group) collectConstraints() {
	g.props = map[string]map[string]int{}
	g.jobLevel = map[*api.Constraint]bool{}
	for _, c := range g.job.Constraints {
		if c != nil {
			g.constraints = append(g.constraints, c)
			g.jobLevel[c] = true
		}
	}
	g.constraints = append(g.constraints, nonNil(g.tg.Constraints)...)
	g.affinities = append(nonNil(g.job.Affinities), nonNil(g.tg.Affinities)...)
	g.spreads = append(nonNil(g.job.Spreads), nonNil(g.tg.Spreads)...)
	for _, t := range g.tg.Tasks {
		if t != nil {
			g.constraints = append(g.constraints, nonNil(t.Constraints)...)
			g.affinities = append(g.affinities, nonNil(t.Affinities)...)
		}
	}
}

func nonNil[T any](in []*T) []*T {
	var out []*T
	for _, v := range in {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

// infeasible says why node can never run the group, whatever else runs on it, or "".
func (g *group) infeasible(n *structs.Node) string {
	for _, task := range g.tg.Tasks {
		if task != nil && !n.HasDriver(task.Driver) {
			return filterMissingDrivers
		}
	}
	for _, task := range g.tg.Tasks {
		if task != nil && task.Resources != nil && !hasDevices(n, task.Resources.Devices) {
			return filterMissingDevices
		}
	}
	if !hasHostVolumes(n, g.tg.Volumes) {
		return filterHostVolumes
	}
	if g.ask.mode == "bridge" && !hasNetworkMode(n, "bridge") {
		return filterBridgeNetwork
	}
	if reason := missingHostNetwork(n, g.ask); reason != "" {
		return reason
	}
	for _, c := range g.constraints {
		if !g.st.match.matches(c.Operand, c.LTarget, c.RTarget, n) {
			return constraintKey(c)
		}
	}
	return ""
}

// distinctInfeasible checks the constraints that depend on where the job's other
// allocations are: distinct_hosts and distinct_property.
func (g *group) distinctInfeasible(n *structs.Node) string {
	for i, c := range g.constraints {
		switch c.Operand {
		case opDistinctHosts:
			if !distinctHostsOn(c) {
				continue
			}
			if g.jobLevel[c] && g.st.jobOnNode[n.ID] > 0 || !g.jobLevel[c] && g.onNode[n.ID] > 0 {
				return constraintKey(c)
			}
		case opDistinctProperty:
			v, ok := resolveTarget(c.LTarget, n)
			if !ok || g.propCounts("dp"+strconv.Itoa(i), c.LTarget, g.jobLevel[c])[v] >= distinctLimit(c) {
				return constraintKey(c)
			}
		}
	}
	return ""
}

// propCounts counts the job's (jobLevel) or the group's allocations by their node's value of
// target, built on first use and kept up to date by place.
func (g *group) propCounts(key, target string, jobLevel bool) map[string]int {
	if m, ok := g.props[key]; ok {
		return m
	}
	m := map[string]int{}
	on := g.onNode
	if jobLevel {
		on = g.st.jobOnNode
	}
	for id, count := range on {
		n := g.st.byID[id]
		if n == nil || count <= 0 {
			continue
		}
		if v, ok := resolveTarget(target, n); ok {
			m[v] += count
		}
	}
	g.props[key] = m
	g.propTargets = append(g.propTargets, propTarget{key: key, target: target})
	return m
}

// propTarget is a counted property: place adds each new allocation to it.
type propTarget struct{ key, target string }

func inPool(jobPool, nodePool string) bool {
	if nodePool == "" {
		nodePool = structs.DefaultNodePool
	}
	return jobPool == "" || jobPool == structs.NodePoolAll || jobPool == nodePool
}

// inDatacenters matches the node's datacenter against the job's list, whose entries may be
// globs ("*", "dc-*").
func inDatacenters(patterns []string, dc string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if ok, err := path.Match(p, dc); err == nil && ok {
			return true
		}
	}
	return false
}

// hasDevices reports whether node has, for every request, a device group whose
// vendor/type/name the request names (by type, vendor/type or vendor/type/name) with at
// least as many healthy instances as asked. A request with constraints or affinities on the
// device's attributes is satisfied by no node: those are not evaluated here, and a task that
// asks for a particular device must never land beside a different one. Instances are not
// counted across allocations either; no client here fingerprints devices, so in practice a
// device request fails placement, naming "missing devices", as the workloads need.
func hasDevices(n *structs.Node, requests []*api.RequestedDevice) bool {
	for _, req := range requests {
		if req == nil {
			continue
		}
		if len(req.Constraints) > 0 || len(req.Affinities) > 0 {
			return false
		}
		want := uint64(1)
		if req.Count != nil {
			want = *req.Count
		}
		if want == 0 {
			continue
		}
		if n.NodeResources == nil || healthyDevices(n.NodeResources.Devices, req.Name) < want {
			return false
		}
	}
	return true
}

func healthyDevices(groups []*api.NodeDeviceResource, name string) uint64 {
	var best uint64
	for _, d := range groups {
		if d == nil || !deviceNameMatches(d, name) {
			continue
		}
		var healthy uint64
		for _, inst := range d.Instances {
			if inst != nil && inst.Healthy {
				healthy++
			}
		}
		best = max(best, healthy)
	}
	return best
}

func deviceNameMatches(d *api.NodeDeviceResource, name string) bool {
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 1:
		return d.Type == parts[0]
	case 2:
		return d.Vendor == parts[0] && d.Type == parts[1]
	case 3:
		return d.Vendor == parts[0] && d.Type == parts[1] && d.Name == parts[2]
	}
	return false
}

// hasHostVolumes reports whether node has every host volume the group asks for (by source),
// writable where the request is. CSI volumes are not placed here: no node has any.
func hasHostVolumes(n *structs.Node, requests map[string]*api.VolumeRequest) bool {
	for _, req := range requests {
		if req == nil {
			continue
		}
		if req.Type != "" && req.Type != "host" {
			return false
		}
		vol := n.HostVolumes[req.Source]
		if vol == nil || (vol.ReadOnly && !req.ReadOnly) {
			return false
		}
	}
	return true
}

// hasNetworkMode says whether the node fingerprinted a network of the mode: a client lists
// its bridge network only when it can run one (root, the CNI plugins found).
func hasNetworkMode(n *structs.Node, mode string) bool {
	if n.NodeResources == nil {
		return false
	}
	for _, nw := range n.NodeResources.Networks {
		if nw != nil && nw.Mode == mode {
			return true
		}
	}
	return false
}
