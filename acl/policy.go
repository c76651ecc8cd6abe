package acl

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
)

// Policy is one parsed ACL policy document. Field names and their JSON form
// match upstream's RulesJSON, which API clients read back.
type Policy struct {
	Namespaces  []*NamespacePolicy  `hcl:"namespace,block"`
	NodePools   []*NodePoolPolicy   `hcl:"node_pool,block"`
	HostVolumes []*HostVolumePolicy `hcl:"host_volume,block"`
	Agent       *AgentPolicy        `hcl:"agent,block"`
	Node        *NodePolicy         `hcl:"node,block"`
	Operator    *OperatorPolicy     `hcl:"operator,block"`
	Quota       *QuotaPolicy        `hcl:"quota,block"`
	Plugin      *PluginPolicy       `hcl:"plugin,block"`

	// ExtraKeysHCL and Sentinel are never set by Parse (unknown keys are
	// rejected; Sentinel is an Enterprise feature); they exist so that the
	// JSON form has the same keys as upstream's RulesJSON.
	ExtraKeysHCL []string
	Sentinel     json.RawMessage

	// Raw is the document exactly as given to Parse.
	Raw string
}

type NamespacePolicy struct {
	Name         string           `hcl:"name,label"`
	Policy       string           `hcl:"policy,optional"`
	Capabilities []string         `hcl:"capabilities,optional"`
	Variables    *VariablesPolicy `hcl:"variables,block"`
}

type VariablesPolicy struct {
	Paths []*VariablesPathPolicy `hcl:"path,block"`
}

type VariablesPathPolicy struct {
	PathSpec     string   `hcl:"path,label"`
	Capabilities []string `hcl:"capabilities,optional"`
}

type NodePoolPolicy struct {
	Name         string   `hcl:"name,label"`
	Policy       string   `hcl:"policy,optional"`
	Capabilities []string `hcl:"capabilities,optional"`
}

type HostVolumePolicy struct {
	Name         string   `hcl:"name,label"`
	Policy       string   `hcl:"policy,optional"`
	Capabilities []string `hcl:"capabilities,optional"`
}

type AgentPolicy struct {
	Policy string `hcl:"policy,optional"`
}

type NodePolicy struct {
	Policy string `hcl:"policy,optional"`
}

type OperatorPolicy struct {
	Policy       string   `hcl:"policy,optional"`
	Capabilities []string `hcl:"capabilities,optional"`
}

type QuotaPolicy struct {
	Policy string `hcl:"policy,optional"`
}

type PluginPolicy struct {
	Policy string `hcl:"policy,optional"`
}

// Label patterns are upstream's, so that names valid there are valid here.
var (
	namespaceLabelRe  = regexp.MustCompile(`^[a-zA-Z0-9-*]{1,128}$`)
	nodePoolLabelRe   = regexp.MustCompile(`^[a-zA-Z0-9-_*]{1,128}$`)
	hostVolumeLabelRe = regexp.MustCompile(`^[a-zA-Z0-9-*]{1,128}$`)
)

// Parse decodes and validates a policy document written in HCL or in
// HCL-JSON. Decoding is strict: an unknown key is an error naming it.
func Parse(rules string) (*Policy, error) {
	src := []byte(rules)
	var file *hcl.File
	var diags hcl.Diagnostics
	if strings.HasPrefix(strings.TrimSpace(rules), "{") {
		file, diags = hcljson.Parse(src, "policy.json")
	} else {
		file, diags = hclsyntax.ParseConfig(src, "policy.hcl", hcl.InitialPos)
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("Failed to parse ACL policy: %s", diags.Error())
	}

	p := &Policy{}
	if diags := gohcl.DecodeBody(file.Body, nil, p); diags.HasErrors() {
		return nil, fmt.Errorf("Invalid ACL policy: %s", diags.Error())
	}
	p.Raw = rules
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Validate checks a policy however it was built; NewACL calls it too, so a
// policy assembled in code cannot smuggle in an unchecked disposition.
func (p *Policy) Validate() error {
	if p == nil || p.isEmpty() {
		return errors.New("Invalid policy: no rules")
	}
	for _, ns := range p.Namespaces {
		if err := ns.validate(); err != nil {
			return err
		}
	}
	for _, np := range p.NodePools {
		if np == nil {
			return errors.New("Invalid policy: empty node_pool rule")
		}
		if err := validateLabelled("node_pool", nodePoolLabelRe, nodePoolCapabilities,
			np.Name, np.Policy, np.Capabilities); err != nil {
			return err
		}
	}
	for _, hv := range p.HostVolumes {
		if hv == nil {
			return errors.New("Invalid policy: empty host_volume rule")
		}
		if err := validateLabelled("host_volume", hostVolumeLabelRe, hostVolumeCapabilities,
			hv.Name, hv.Policy, hv.Capabilities); err != nil {
			return err
		}
	}
	if p.Agent != nil {
		if err := validateCoarse("agent", p.Agent.Policy); err != nil {
			return err
		}
	}
	if p.Node != nil {
		if err := validateCoarse("node", p.Node.Policy); err != nil {
			return err
		}
	}
	if p.Quota != nil {
		if err := validateCoarse("quota", p.Quota.Policy); err != nil {
			return err
		}
	}
	if p.Plugin != nil {
		if err := validateCoarse("plugin", p.Plugin.Policy); err != nil {
			return err
		}
	}
	if op := p.Operator; op != nil {
		// A capabilities-only operator block is meaningful; a bare one is not.
		if op.Policy != "" || len(op.Capabilities) == 0 {
			if !operatorCapabilities.validDisposition(op.Policy) {
				return fmt.Errorf("Invalid operator policy %q", op.Policy)
			}
		}
		for _, c := range op.Capabilities {
			if !operatorCapabilities.validCapability(c) {
				return fmt.Errorf("Invalid operator capability '%s'", c)
			}
		}
	}
	return nil
}

func (p *Policy) isEmpty() bool {
	return len(p.Namespaces) == 0 && len(p.NodePools) == 0 && len(p.HostVolumes) == 0 &&
		p.Agent == nil && p.Node == nil && p.Operator == nil && p.Quota == nil && p.Plugin == nil
}

func (ns *NamespacePolicy) validate() error {
	if ns == nil {
		return errors.New("Invalid policy: empty namespace rule")
	}
	if err := validateLabelled("namespace", namespaceLabelRe, namespaceCapabilities,
		ns.Name, ns.Policy, ns.Capabilities); err != nil {
		return err
	}
	if ns.Variables == nil {
		return nil
	}
	if len(ns.Variables.Paths) == 0 {
		return fmt.Errorf("Invalid variable policy: no variable paths in namespace %q", ns.Name)
	}
	for _, vp := range ns.Variables.Paths {
		if vp == nil {
			return fmt.Errorf("Invalid variable policy: empty path rule in namespace %q", ns.Name)
		}
		if vp.PathSpec == "" {
			return fmt.Errorf("Invalid variable path in namespace %q: path must not be empty", ns.Name)
		}
		// Variable paths are relative to the namespace; a leading slash
		// would never match a stored path and so silently grant nothing.
		if strings.HasPrefix(vp.PathSpec, "/") {
			return fmt.Errorf("Invalid variable path %q in namespace %q: must not start with '/'",
				vp.PathSpec, ns.Name)
		}
		for _, c := range vp.Capabilities {
			if !variablesCapabilities.validCapability(c) {
				return fmt.Errorf("Invalid variable capability '%s' for path %q in namespace %q",
					c, vp.PathSpec, ns.Name)
			}
		}
	}
	return nil
}

// validateLabelled checks the blocks that carry a name label, a `policy`
// shorthand and a `capabilities` list. An empty policy is allowed: the
// capabilities list alone may grant.
func validateLabelled(block string, labelRe *regexp.Regexp, table *capabilityTable,
	label, disposition string, caps []string) error {
	if !labelRe.MatchString(label) {
		return fmt.Errorf("Invalid %s name %q: must match %s", block, label, labelRe)
	}
	if disposition != "" && !table.validDisposition(disposition) {
		return fmt.Errorf("Invalid %s policy %q in %s %q", table.kind, disposition, block, label)
	}
	for _, c := range caps {
		if !table.validCapability(c) {
			return fmt.Errorf("Invalid %s capability '%s' in %s %q", table.kind, c, block, label)
		}
	}
	return nil
}

func validateCoarse(block, disposition string) error {
	for _, d := range coarseDispositions[block] {
		if d == disposition {
			return nil
		}
	}
	return fmt.Errorf("Invalid %s policy %q", block, disposition)
}
