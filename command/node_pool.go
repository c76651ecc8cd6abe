package command

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/nomad/api"
)

const nodePoolHelp = `
Usage: nomad node pool <subcommand> [options] [args]

  Create, list, read and delete node pools. The built-in pools "all" and
  "default" always exist and cannot be changed.
`

// NodePoolApplyCommand creates or updates a node pool from a specification file.
type NodePoolApplyCommand struct {
	Meta
}

func (c *NodePoolApplyCommand) Help() string {
	return helpText(`
Usage: nomad node pool apply [options] <file>

  Create or update the node pool a file describes ("-" reads stdin). The file
  is HCL:

    node_pool "gpu" {
      description = "Nodes with GPUs"
      meta {
        team = "ml"
      }
    }

  or the JSON form of the API's NodePool object.
`, "")
}

func (c *NodePoolApplyCommand) Synopsis() string { return "Create or update a node pool" }

func (c *NodePoolApplyCommand) Run(args []string) int {
	pos, code, ok := c.parseArgs(c.FlagSet("node pool apply"), args, "<file>")
	if !ok {
		return code
	}
	src, err := readInput(pos[0], nil)
	if err != nil {
		return c.fail("Error reading %s: %v", pos[0], err)
	}
	pool, err := parseNodePoolSpec(src)
	if err != nil {
		return c.fail("Error parsing node pool: %v", err)
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	if _, err := client.NodePools().Register(pool, nil); err != nil {
		return c.fail("Error applying node pool: %v", err)
	}
	c.Ui.Output(fmt.Sprintf("Successfully applied node pool %q!", pool.Name))
	return 0
}

// nodePoolSpec is the HCL form of a pool file.
type nodePoolSpec struct {
	Pool struct {
		Name            string `hcl:"name,label"`
		Description     string `hcl:"description,optional"`
		NodeIdentityTTL string `hcl:"node_identity_ttl,optional"`
		MetaBlock       *struct {
			Values hcl.Attributes `hcl:",remain"`
		} `hcl:"meta,block"`
		Scheduler *struct {
			Algorithm              string `hcl:"scheduler_algorithm,optional"`
			MemoryOversubscription *bool  `hcl:"memory_oversubscription_enabled,optional"`
		} `hcl:"scheduler_config,block"`
	} `hcl:"node_pool,block"`
}

// parseNodePoolSpec reads a pool file: JSON when it starts with '{', HCL otherwise.
func parseNodePoolSpec(src []byte) (*api.NodePool, error) {
	if strings.HasPrefix(strings.TrimSpace(string(src)), "{") {
		var pool api.NodePool
		if err := json.Unmarshal(src, &pool); err != nil {
			return nil, err
		}
		return &pool, nil
	}
	file, diags := hclsyntax.ParseConfig(src, "pool.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	var spec nodePoolSpec
	if diags := gohcl.DecodeBody(file.Body, nil, &spec); diags.HasErrors() {
		return nil, diags
	}
	p := spec.Pool
	pool := &api.NodePool{Name: p.Name, Description: p.Description}
	if p.MetaBlock != nil {
		pool.Meta = map[string]string{}
		for k, attr := range p.MetaBlock.Values {
			var v string
			if diags := gohcl.DecodeExpression(attr.Expr, nil, &v); diags.HasErrors() {
				return nil, diags
			}
			pool.Meta[k] = v
		}
	}
	if p.NodeIdentityTTL != "" {
		ttl, err := time.ParseDuration(p.NodeIdentityTTL)
		if err != nil {
			return nil, fmt.Errorf("invalid node_identity_ttl %q: %v", p.NodeIdentityTTL, err)
		}
		pool.NodeIdentityTTL = ttl
	}
	if s := p.Scheduler; s != nil {
		pool.SchedulerConfiguration = &api.NodePoolSchedulerConfiguration{
			SchedulerAlgorithm: api.SchedulerAlgorithm(s.Algorithm), MemoryOversubscriptionEnabled: s.MemoryOversubscription,
		}
	}
	return pool, nil
}

func newNodePoolList(m Meta) cli.Command {
	return &readCommand[[]*api.NodePool]{Meta: m, name: "node pool list", args: []string{"[<prefix>]"},
		synopsis: "List node pools", jsonWhat: "the list",
		usage: `
Usage: nomad node pool list [options] [<prefix>]

  List the node pools the token may read.
`,
		fetch: func(client *api.Client, pos []string) ([]*api.NodePool, error) {
			return queried(client.NodePools().PrefixList(optionalArg(pos, 0), nil))
		},
		failure: "Error listing node pools: %v", format: formatNodePoolList}
}

func formatNodePoolList(list []*api.NodePool) string {
	return formatRows(list, "No node pools found", "Name|Description", func(p *api.NodePool) string {
		return p.Name + "|" + p.Description
	})
}

func newNodePoolInfo(m Meta) cli.Command {
	return &readCommand[*api.NodePool]{Meta: m, name: "node pool info", args: []string{"<name>"},
		synopsis: "Show a node pool", jsonWhat: "the node pool",
		usage: `
Usage: nomad node pool info [options] <name>

  Show a node pool.
`,
		fetch: func(client *api.Client, pos []string) (*api.NodePool, error) {
			return queried(client.NodePools().Info(pos[0], nil))
		},
		failure: "Error reading node pool: %v", format: formatNodePool}
}

func formatNodePool(p *api.NodePool) string {
	rows := []string{"Name|" + p.Name, "Description|" + p.Description}
	if p.NodeIdentityTTL != 0 {
		rows = append(rows, "Node Identity TTL|"+p.NodeIdentityTTL.String())
	}
	if sc := p.SchedulerConfiguration; sc != nil && sc.SchedulerAlgorithm != "" {
		rows = append(rows, "Scheduler Algorithm|"+string(sc.SchedulerAlgorithm))
	}
	keys := slices.Sorted(maps.Keys(p.Meta))
	for _, k := range keys {
		rows = append(rows, "Meta "+k+"|"+p.Meta[k])
	}
	return formatKV(rows)
}

func newNodePoolDelete(m Meta) cli.Command {
	return &deleteCommand{Meta: m, name: "node pool delete", arg: "<name>", synopsis: "Delete a node pool",
		usage: `
Usage: nomad node pool delete [options] <name>

  Delete a node pool. The agent refuses while nodes are in it or live jobs
  use it; "all" and "default" cannot be deleted.
`,
		del:     func(client *api.Client, name string) error { return written(client.NodePools().Delete(name, nil)) },
		failure: "Error deleting node pool: %v", done: "Successfully deleted node pool %q!"}
}
