package acl

import (
	"slices"
	"sort"
)

// Grant is one right: a capability of a block at a label. Label is a namespace, node pool or
// host volume name (or glob), a variable path in Namespace, or "" for the unlabelled blocks
// (agent, node, operator, quota, plugin), whose Capability is a disposition.
type Grant struct {
	Block      string
	Namespace  string
	Label      string
	Capability string
}

// String words a grant for a refusal: `purge-job in namespace "default"`.
func (g Grant) String() string {
	switch g.Block {
	case "namespace":
		return g.Capability + ` in namespace "` + g.Label + `"`
	case "variables":
		return g.Capability + ` on variables "` + g.Label + `" in namespace "` + g.Namespace + `"`
	case "node_pool":
		return g.Capability + ` on node pool "` + g.Label + `"`
	case "host_volume":
		return g.Capability + ` on host volume "` + g.Label + `"`
	}
	return g.Block + " " + g.Capability
}

// Probe is where two ACLs are compared: the labels at which a grant is looked up. An ACL
// answers for any name, so comparing them everywhere is impossible; comparing them at every
// label either names (the glob patterns themselves included) and at the names that exist
// finds every right one holds that the other lacks for any name that exists or is matched
// the same way. A glob label is looked up as a name: "prod-*" then matches a holder's rule
// "prod-*" or "*" but not "prod-a", which is what covering it means.
type Probe struct {
	Namespaces  []string
	NodePools   []string
	HostVolumes []string
	// Variables maps a namespace label to the variable path labels looked up in it.
	Variables map[string][]string
}

// AddPolicy adds the labels p names to the probe.
func (pr *Probe) AddPolicy(p *Policy) {
	if p == nil {
		return
	}
	for _, ns := range p.Namespaces {
		pr.Namespaces = append(pr.Namespaces, ns.Name)
		if ns.Variables == nil {
			continue
		}
		if pr.Variables == nil {
			pr.Variables = map[string][]string{}
		}
		for _, vp := range ns.Variables.Paths {
			pr.Variables[ns.Name] = append(pr.Variables[ns.Name], vp.PathSpec)
		}
	}
	for _, np := range p.NodePools {
		pr.NodePools = append(pr.NodePools, np.Name)
	}
	for _, hv := range p.HostVolumes {
		pr.HostVolumes = append(pr.HostVolumes, hv.Name)
	}
}

// Beyond returns what granted allows at the probe's labels that held does not, sorted and
// without repeats. A management or disabled held ACL lacks nothing; a management granted
// ACL is refused for every non-management holder as one grant, "management".
func Beyond(held, granted *ACL, probe Probe) []Grant {
	if held != nil && held.bypass() {
		return nil
	}
	if granted == nil {
		return nil
	}
	if granted.bypass() {
		return []Grant{{Block: "management"}}
	}
	seen := map[Grant]bool{}
	var out []Grant
	add := func(g Grant) {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	for _, ns := range dedupe(probe.Namespaces) {
		for _, d := range namespaceCapabilities.defs {
			c := d.name
			if c == PolicyDeny {
				continue
			}
			if granted.AllowNamespaceOperation(ns, c) && !held.AllowNamespaceOperation(ns, c) {
				add(Grant{Block: "namespace", Label: ns, Capability: c})
			}
		}
	}
	for ns, paths := range probe.Variables {
		// A variable rule written under a glob namespace label applies in every namespace it
		// matches, the probed ones included.
		for _, n := range dedupe(append([]string{ns}, probe.Namespaces...)) {
			for _, p := range dedupe(paths) {
				for _, d := range variablesCapabilities.defs {
					c := d.name
					if c == VariablesCapabilityDeny {
						continue
					}
					if granted.AllowVariableOperation(n, p, c) && !held.AllowVariableOperation(n, p, c) {
						add(Grant{Block: "variables", Namespace: n, Label: p, Capability: c})
					}
				}
			}
		}
	}
	for _, pool := range dedupe(probe.NodePools) {
		for _, d := range nodePoolCapabilities.defs {
			if d.name != PolicyDeny && granted.AllowNodePoolOperation(pool, d.name) && !held.AllowNodePoolOperation(pool, d.name) {
				add(Grant{Block: "node_pool", Label: pool, Capability: d.name})
			}
		}
	}
	for _, vol := range dedupe(probe.HostVolumes) {
		for _, d := range hostVolumeCapabilities.defs {
			if d.name != PolicyDeny && granted.AllowHostVolumeOperation(vol, d.name) && !held.AllowHostVolumeOperation(vol, d.name) {
				add(Grant{Block: "host_volume", Label: vol, Capability: d.name})
			}
		}
	}
	coarse := []struct {
		block, disposition string
		allow              func(*ACL) bool
	}{
		{"agent", PolicyRead, (*ACL).AllowAgentRead}, {"agent", PolicyWrite, (*ACL).AllowAgentWrite},
		{"node", PolicyRead, (*ACL).AllowNodeRead}, {"node", PolicyWrite, (*ACL).AllowNodeWrite},
		{"operator", PolicyRead, (*ACL).AllowOperatorRead}, {"operator", PolicyWrite, (*ACL).AllowOperatorWrite},
		{"quota", PolicyRead, (*ACL).AllowQuotaRead}, {"quota", PolicyWrite, (*ACL).AllowQuotaWrite},
		{"plugin", PolicyList, (*ACL).AllowPluginList}, {"plugin", PolicyRead, (*ACL).AllowPluginRead},
	}
	for _, c := range coarse {
		if c.allow(granted) && !c.allow(held) {
			add(Grant{Block: c.block, Capability: c.disposition})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Block != b.Block {
			return a.Block < b.Block
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Label != b.Label {
			return a.Label < b.Label
		}
		return a.Capability < b.Capability
	})
	return out
}

func dedupe(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}
