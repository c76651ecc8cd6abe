package command

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
)

// isSpecFile tells a namespace spec file from a namespace name. A name cannot contain a dot
// or a slash, so an argument that exists as a file is never a name that happens to match one.
func isSpecFile(arg string) bool {
	if arg == "-" {
		return true
	}
	fi, err := os.Stat(arg)
	return err == nil && !fi.IsDir()
}

// namespaceSpec is the HCL form of a namespace file, with upstream's attribute names.
type namespaceSpec struct {
	Name        string `hcl:"name"`
	Description string `hcl:"description,optional"`
	Quota       string `hcl:"quota,optional"`
	MetaBlock   *struct {
		Values hcl.Attributes `hcl:",remain"`
	} `hcl:"meta,block"`
	Capabilities *struct {
		EnabledTaskDrivers   []string `hcl:"enabled_task_drivers,optional"`
		DisabledTaskDrivers  []string `hcl:"disabled_task_drivers,optional"`
		EnabledNetworkModes  []string `hcl:"enabled_network_modes,optional"`
		DisabledNetworkModes []string `hcl:"disabled_network_modes,optional"`
	} `hcl:"capabilities,block"`
	// No `denied`: the servers do not store it, and a spec must not look as if it applied.
	NodePool *struct {
		Default string   `hcl:"default,optional"`
		Allowed []string `hcl:"allowed,optional"`
	} `hcl:"node_pool_config,block"`
}

// parseNamespaceSpec reads a namespace file: JSON when it starts with '{', HCL otherwise. An
// unknown attribute or block is an error, so a misspelt capability is not silently dropped.
func parseNamespaceSpec(src []byte) (*api.Namespace, error) {
	if strings.HasPrefix(strings.TrimSpace(string(src)), "{") {
		var ns api.Namespace
		dec := json.NewDecoder(strings.NewReader(string(src)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ns); err != nil {
			return nil, err
		}
		return &ns, nil
	}
	file, diags := hclsyntax.ParseConfig(src, "namespace.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	var spec namespaceSpec
	if diags := gohcl.DecodeBody(file.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	ns := &api.Namespace{Name: spec.Name, Description: spec.Description, Quota: spec.Quota}
	if spec.MetaBlock != nil {
		ns.Meta = map[string]string{}
		for k, attr := range spec.MetaBlock.Values {
			var v string
			if diags := gohcl.DecodeExpression(attr.Expr, nil, &v); diags.HasErrors() {
				return nil, fmt.Errorf("meta %q: %w", k, diags)
			}
			ns.Meta[k] = v
		}
	}
	if c := spec.Capabilities; c != nil {
		ns.Capabilities = &api.NamespaceCapabilities{
			EnabledTaskDrivers: c.EnabledTaskDrivers, DisabledTaskDrivers: c.DisabledTaskDrivers,
			EnabledNetworkModes: c.EnabledNetworkModes, DisabledNetworkModes: c.DisabledNetworkModes,
		}
	}
	if p := spec.NodePool; p != nil {
		ns.NodePoolConfiguration = &api.NamespaceNodePoolConfiguration{Default: p.Default, Allowed: p.Allowed}
	}
	return ns, nil
}
