package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

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
	var job, policyType string
	var verbose, asJSON bool
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

// JobScalingEventsCommand lists the scaling events of a job's task groups.
type JobScalingEventsCommand struct {
	Meta
}

func (c *JobScalingEventsCommand) Help() string {
	return helpText(`
Usage: nomad job scaling-events [options] <job>

  List the scaling events of a job's task groups, newest first: each count
  change (by "nomad job scale", the API or an autoscaler) and each recorded
  scaling error.
`, `
Scaling-Events Options:

  -verbose
    Also show each event's error flag, message and evaluation ID.

  -json
    Print the events as JSON, by task group.
`)
}

func (c *JobScalingEventsCommand) Synopsis() string {
	return "Display the most recent scaling events for a job"
}

// scalingEventRow is one event with its group, for sorting across groups.
type scalingEventRow struct {
	group string
	ev    *api.ScalingEvent
}

func (c *JobScalingEventsCommand) Run(args []string) int {
	var verbose, asJSON bool
	fs := c.FlagSet("job scaling-events")
	fs.BoolVar(&verbose, "verbose", false, "")
	fs.BoolVar(&asJSON, "json", false, "")
	_, client, jobID, code, ok := c.connectJob(fs, args, "<job>")
	if !ok {
		return code
	}
	status, _, err := client.Jobs().ScaleStatus(jobID, nil)
	if err != nil {
		return c.fail("Error reading the scaling status of job %q: %v", jobID, err)
	}
	if asJSON {
		events := map[string][]api.ScalingEvent{}
		for name, tg := range status.TaskGroups {
			events[name] = nonNilSlice(tg.Events)
		}
		return c.printJSON(events)
	}
	var rows []scalingEventRow
	for name, tg := range status.TaskGroups {
		for i := range tg.Events {
			rows = append(rows, scalingEventRow{group: name, ev: &tg.Events[i]})
		}
	}
	if len(rows) == 0 {
		c.Ui.Output("No events found")
		return 0
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].ev.Time != rows[j].ev.Time {
			return rows[i].ev.Time > rows[j].ev.Time
		}
		return rows[i].group < rows[j].group
	})
	head := "Task Group|Count|PrevCount|Date"
	if verbose {
		head += "|Error|Message|Eval ID"
	}
	out := []string{head}
	for _, r := range rows {
		count := "-"
		if r.ev.Count != nil {
			count = fmt.Sprint(*r.ev.Count)
		}
		cols := []string{r.group, count, fmt.Sprint(r.ev.PreviousCount), formatTime(time.Unix(0, int64(r.ev.Time)))}
		if verbose {
			evalID := "<none>"
			if r.ev.EvalID != nil && *r.ev.EvalID != "" {
				evalID = *r.ev.EvalID
			}
			cols = append(cols, fmt.Sprint(r.ev.Error), r.ev.Message, evalID)
		}
		out = append(out, strings.Join(cols, "|"))
	}
	c.Ui.Output(formatList(out))
	return 0
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
