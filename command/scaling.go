package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const scalingHelp = `
Usage: nomad scaling <subcommand> [options] [args]

  Inspect the scaling policies of jobs' groups.
`

const scalingPolicyHelp = `
Usage: nomad scaling policy <subcommand> [options] [args]

  List scaling policies and show one.
`

// newScalingPolicyList lists the scaling policies of the namespace.
func newScalingPolicyList(m Meta) cli.Command {
	var job string
	var policyType string
	var verbose bool
	var asJSON bool
	var tmpl string
	return &command{Meta: m, name: "scaling policy list", synopsis: "List scaling policies",
		usage: `
Usage: nomad scaling policy list [options]

  List the scaling policies of the namespace, sorted by ID. Needs list-scaling-
  policies or read-job access in the namespace when ACLs are on.
`,
		heading: "Scaling Policy List",
		options: []option{
			flagOpt(&job, "", "-job=<job>", "Only the policies of this job."),
			flagOpt(&policyType, "", "-type=<type>", "Only the policies of this type, e.g. horizontal."),
			boolOpt(&verbose, "-verbose", "Show full IDs."),
			boolOpt(&asJSON, "-json", "Print the API's JSON."),
			flagOpt(&tmpl, "", "-t=<template>", "Format the response with a Go template."),
		},
		withClient: func(c *command, client *api.Client, _ []string) int {
			q := &api.QueryOptions{Params: map[string]string{}}
			if job != "" {
				q.Params["job"] = job
			}
			if policyType != "" {
				q.Params["type"] = policyType
			}
			policies, _, err := client.Scaling().ListPolicies(q)
			if err != nil {
				return c.fail("Error listing scaling policies: %v", err)
			}
			sort.Slice(policies, func(i, j int) bool { return policies[i].ID < policies[j].ID })
			return printTemplated(&c.Meta, policies, asJSON, tmpl, func(ps []*api.ScalingPolicyListStub) string {
				if len(ps) == 0 {
					return "No policies found"
				}
				rows := []string{"ID|Enabled|Type|Target"}
				for _, p := range ps {
					id := p.ID
					if !verbose {
						id = shortID(id)
					}
					rows = append(rows, fmt.Sprintf("%s|%t|%s|%s", id, p.Enabled, p.Type, formatScalingTarget(p.Target)))
				}
				return formatList(rows)
			})
		},
	}
}

// formatScalingTarget writes a policy's target in a fixed order, the widest scope first.
func formatScalingTarget(target map[string]string) string {
	order := map[string]int{"Namespace": 0, "Job": 1, "Group": 2, "Task": 3}
	keys := make([]string, 0, len(target))
	for k := range target {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		oi, iKnown := order[keys[i]]
		oj, jKnown := order[keys[j]]
		if iKnown != jKnown {
			return iKnown
		}
		if oi != oj {
			return oi < oj
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+":"+target[k])
	}
	return strings.Join(parts, ",")
}

// ScalingPolicyInfoCommand shows one scaling policy.
type ScalingPolicyInfoCommand struct {
	Meta
	asJSON bool
	tmpl   string
}

func (c *ScalingPolicyInfoCommand) Help() string {
	return helpText(`
Usage: nomad scaling policy info [options] <policy>

  Show a scaling policy: its target, bounds and the policy document the
  autoscaler reads. <policy> is an ID or a unique prefix.
`, optionsHelp("Scaling Policy Info", c.options()))
}

func (c *ScalingPolicyInfoCommand) options() []option {
	return []option{
		boolOpt(&c.asJSON, "-json", "Print the API's JSON."),
		flagOpt(&c.tmpl, "", "-t=<template>", "Format the response with a Go template."),
	}
}

func (c *ScalingPolicyInfoCommand) Synopsis() string { return "Display an individual scaling policy" }

func (c *ScalingPolicyInfoCommand) Run(args []string) int {
	fs := c.flagSetWith("scaling policy info", c.options())
	pos, client, code, ok := c.connect(fs, args, "<policy>")
	if !ok {
		return code
	}
	id, ok := c.resolveScalingPolicy(client, pos[0])
	if !ok {
		return 1
	}
	policy, _, err := client.Scaling().GetPolicy(id, nil)
	if err != nil {
		return c.fail("Error reading scaling policy: %v", err)
	}
	return printTemplated(&c.Meta, policy, c.asJSON, c.tmpl, formatScalingPolicy)
}

// resolveScalingPolicy turns an ID or unique prefix into the exact ID. The list endpoint has
// no prefix filter, so the prefix is matched here.
func (c *ScalingPolicyInfoCommand) resolveScalingPolicy(client *api.Client, prefix string) (string, bool) {
	policies, _, err := client.Scaling().ListPolicies(nil)
	if err != nil {
		c.fail("Error listing scaling policies: %v", err)
		return "", false
	}
	var matches []*api.ScalingPolicyListStub
	for _, p := range policies {
		if p.ID == prefix {
			return p.ID, true
		}
		if strings.HasPrefix(p.ID, prefix) {
			matches = append(matches, p)
		}
	}
	switch len(matches) {
	case 0:
		c.fail("No scaling policy with prefix or ID %q found", prefix)
		return "", false
	case 1:
		return matches[0].ID, true
	}
	sort.Slice(matches, func(i, j int) bool { return matches[i].ID < matches[j].ID })
	rows := []string{"ID|Enabled|Type|Target"}
	for _, p := range matches {
		rows = append(rows, fmt.Sprintf("%s|%t|%s|%s", p.ID, p.Enabled, p.Type, formatScalingTarget(p.Target)))
	}
	c.fail("Prefix matched multiple scaling policies\n\n%s", formatList(rows))
	return "", false
}

func formatScalingPolicy(p *api.ScalingPolicy) string {
	bound := func(v *int64) string {
		if v == nil {
			return "<none>"
		}
		return fmt.Sprint(*v)
	}
	out := formatKV([]string{
		"ID|" + p.ID,
		"Enabled|" + fmt.Sprint(boolv(p.Enabled)),
		"Type|" + p.Type,
		"Target|" + formatScalingTarget(p.Target),
		"Min|" + bound(p.Min),
		"Max|" + bound(p.Max),
	})
	if len(p.Policy) == 0 {
		return out + "\n\nPolicy\n<none>"
	}
	doc, err := prettyJSON(p.Policy)
	if err != nil {
		doc = fmt.Sprint(p.Policy)
	}
	return out + "\n\nPolicy\n" + doc
}
