package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Node metadata comes from two places, as upstream: the static meta of the agent's
// configuration (plus upstream's connect.* defaults), and the dynamic meta set through
// /v1/client/metadata. Dynamic entries win; a dynamic entry with a nil value hides the static
// key of that name. The dynamic meta is kept in the state directory (node_meta.json), so it
// survives an agent restart, and is sent to the servers in the node's registration, where
// constraints and the node API read the merged Meta.

const nodeMetaFile = "node_meta.json"

// Limits of dynamic metadata, checked before anything is stored.
const (
	maxNodeMetaKeys     = 512
	maxNodeMetaKeyLen   = 128
	maxNodeMetaValueLen = 4096
)

// defaultNodeMeta is the metadata upstream's clients give every node unless configured.
var defaultNodeMeta = map[string]string{
	"connect.sidecar_image":                           "docker.io/envoyproxy/envoy:v${NOMAD_envoy_version}",
	"connect.gateway_image":                           "docker.io/envoyproxy/envoy:v${NOMAD_envoy_version}",
	"connect.log_level":                               "info",
	"connect.proxy_concurrency":                       "1",
	"connect.transparent_proxy.default_outbound_port": "15001",
	"connect.transparent_proxy.default_uid":           "101",
}

// staticNodeMeta is the configured meta over upstream's defaults.
func staticNodeMeta(configured map[string]string) map[string]string {
	out := maps.Clone(defaultNodeMeta)
	maps.Copy(out, configured)
	return out
}

// mergeNodeMeta applies dynamic over static.
func mergeNodeMeta(static map[string]string, dynamic map[string]*string) map[string]string {
	out := maps.Clone(static)
	for k, v := range dynamic {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = *v
	}
	return out
}

// loadDynamicMeta reads the dynamic meta a previous run stored; none without a state
// directory or file.
func loadDynamicMeta(stateDir string) (map[string]*string, error) {
	out := map[string]*string{}
	if stateDir == "" {
		return out, nil
	}
	raw, err := os.ReadFile(filepath.Join(stateDir, nodeMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("client: reading %s: %w", nodeMetaFile, err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("client: %s: %w", nodeMetaFile, err)
	}
	return out, nil
}

func storeDynamicMeta(stateDir string, dynamic map[string]*string) error {
	if stateDir == "" {
		return nil
	}
	raw, err := json.Marshal(dynamic)
	if err != nil {
		return err
	}
	path := filepath.Join(stateDir, nodeMetaFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("client: writing %s: %w", nodeMetaFile, err)
	}
	return os.Rename(tmp, path)
}

// ValidateNodeMetaApply checks a dynamic meta update against the limits, naming the key at
// fault.
func ValidateNodeMetaApply(meta map[string]*string) error {
	if len(meta) == 0 {
		return structs.BadRequest("Meta: at least one key must be set or removed")
	}
	if len(meta) > maxNodeMetaKeys {
		return structs.BadRequest("Meta: at most %d keys per request", maxNodeMetaKeys)
	}
	for k, v := range meta {
		switch {
		case k == "":
			return structs.BadRequest("Meta: a key must not be empty")
		case len(k) > maxNodeMetaKeyLen:
			return structs.BadRequest("Meta: key %.32q... is longer than %d bytes", k, maxNodeMetaKeyLen)
		case v != nil && len(*v) > maxNodeMetaValueLen:
			return structs.BadRequest("Meta: the value of %q is longer than %d bytes", k, maxNodeMetaValueLen)
		}
		for _, r := range k {
			if r < 0x20 || r == 0x7f {
				return structs.BadRequest("Meta: key %q contains a control character", k)
			}
		}
	}
	return nil
}

// NodeMeta answers the node's merged, dynamic and static metadata.
func (c *Client) NodeMeta() *api.NodeMetaResponse {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	return c.nodeMetaLocked()
}

func (c *Client) nodeMetaLocked() *api.NodeMetaResponse {
	dynamic := make(map[string]*string, len(c.dynamicMeta))
	for k, v := range c.dynamicMeta {
		if v != nil {
			s := *v
			v = &s
		}
		dynamic[k] = v
	}
	return &api.NodeMetaResponse{
		Meta:    mergeNodeMeta(c.staticMeta, c.dynamicMeta),
		Dynamic: dynamic,
		Static:  maps.Clone(c.staticMeta),
	}
}

// ApplyNodeMeta merges meta into the dynamic metadata (a nil value hides a static key), stores
// it and has the node registered again so the servers see it. It answers the new metadata.
func (c *Client) ApplyNodeMeta(meta map[string]*string) (*api.NodeMetaResponse, error) {
	if err := ValidateNodeMetaApply(meta); err != nil {
		return nil, err
	}
	c.metaMu.Lock()
	next := maps.Clone(c.dynamicMeta)
	for k, v := range meta {
		if v != nil {
			s := *v
			v = &s
		}
		next[k] = v
	}
	if len(next) > maxNodeMetaKeys {
		c.metaMu.Unlock()
		return nil, structs.BadRequest("Meta: the node would hold more than %d dynamic keys", maxNodeMetaKeys)
	}
	if err := storeDynamicMeta(c.config.StateDir, next); err != nil {
		c.metaMu.Unlock()
		return nil, err
	}
	c.dynamicMeta = next
	out := c.nodeMetaLocked()
	c.metaMu.Unlock()
	// The registration carries the merged meta; the heartbeat loop sends it.
	select {
	case c.metaChanged <- struct{}{}:
	default:
	}
	return out, nil
}
