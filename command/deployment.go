package command

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const deploymentHelp = `
Usage: nomad deployment <subcommand> [options] [args]

  List and inspect deployments, and move them on: promote canaries, fail,
  pause or resume a rollout.
`

// resolveDeployment turns a deployment ID or unique ID prefix into the deployment.
func (m *Meta) resolveDeployment(client *api.Client, prefix string) (*api.Deployment, bool) {
	list, _, err := client.Deployments().PrefixList(prefix)
	if err != nil {
		m.fail("Error querying deployment prefix %q: %v", prefix, err)
		return nil, false
	}
	for _, d := range list {
		if d.ID == prefix {
			return d, true
		}
	}
	switch len(list) {
	case 0:
		m.fail("No deployment(s) with prefix or ID %q found", prefix)
		return nil, false
	case 1:
		return list[0], true
	}
	ids := make([]string, 0, len(list))
	for _, d := range list {
		ids = append(ids, d.ID)
	}
	m.fail("Prefix %q matched multiple deployments:\n%s", prefix, strings.Join(ids, "\n"))
	return nil, false
}

func newDeploymentList(m Meta) cli.Command {
	return &readCommand[[]*api.Deployment]{Meta: m, name: "deployment list",
		synopsis: "List deployments", jsonWhat: "the deployments",
		usage: `
Usage: nomad deployment list [options]

  List the deployments the token can see, newest first.
`,
		fetch: func(client *api.Client, _ []string) ([]*api.Deployment, error) {
			return queried(client.Deployments().List(nil))
		},
		failure: "Error retrieving deployments: %v", format: formatDeploymentList}
}

func formatDeploymentList(list []*api.Deployment) string {
	if len(list) == 0 {
		return "No deployments found"
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].CreateIndex > list[j].CreateIndex })
	rows := []string{"ID|Job ID|Job Version|Status|Description"}
	for _, d := range list {
		rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s", shortID(d.ID), d.JobID, d.JobVersion, d.Status, d.StatusDescription))
	}
	return formatList(rows)
}

func newDeploymentStatus(m Meta) cli.Command {
	return &readCommand[*api.Deployment]{Meta: m, name: "deployment status", args: []string{"<deployment>"},
		synopsis: "Show a deployment", jsonWhat: "the deployment",
		usage: `
Usage: nomad deployment status [options] <deployment>

  Show a deployment and the progress of each of its task groups. The
  deployment may be given by a unique ID prefix.
`,
		fetch: func(client *api.Client, pos []string) (*api.Deployment, error) {
			if d, ok := m.resolveDeployment(client, pos[0]); ok {
				return d, nil
			}
			return nil, errReported
		},
		format: formatDeployment}
}

func formatDeployment(d *api.Deployment) string {
	out := formatKV([]string{
		"ID|" + d.ID,
		"Job ID|" + d.JobID,
		fmt.Sprintf("Job Version|%d", d.JobVersion),
		"Status|" + d.Status,
		"Description|" + d.StatusDescription,
	})
	return out + "\n\nDeployed\n" + formatDeploymentGroups(d)
}

// formatDeploymentGroups is the per-group table of a deployment; the canary columns appear
// when a group has canaries.
func formatDeploymentGroups(d *api.Deployment) string {
	names := make([]string, 0, len(d.TaskGroups))
	canaries := false
	for name, st := range d.TaskGroups {
		names = append(names, name)
		canaries = canaries || st.DesiredCanaries > 0
	}
	sort.Strings(names)
	head := "Task Group|Auto Revert|Desired|Placed|Healthy|Unhealthy|Progress Deadline"
	if canaries {
		head = "Task Group|Auto Revert|Promoted|Desired|Canaries|Placed|Healthy|Unhealthy|Progress Deadline"
	}
	rows := []string{head}
	for _, name := range names {
		st := d.TaskGroups[name]
		deadline := "-"
		if !st.RequireProgressBy.IsZero() {
			deadline = formatTime(st.RequireProgressBy)
		}
		if canaries {
			rows = append(rows, fmt.Sprintf("%s|%t|%t|%d|%d|%d|%d|%d|%s", name, st.AutoRevert, st.Promoted, st.DesiredTotal,
				st.DesiredCanaries, st.PlacedAllocs, st.HealthyAllocs, st.UnhealthyAllocs, deadline))
			continue
		}
		rows = append(rows, fmt.Sprintf("%s|%t|%d|%d|%d|%d|%s", name, st.AutoRevert, st.DesiredTotal,
			st.PlacedAllocs, st.HealthyAllocs, st.UnhealthyAllocs, deadline))
	}
	return formatList(rows)
}

// deploymentWrite is the shape of the commands that act on one deployment and may monitor
// the evaluation they cause.
type deploymentWrite struct {
	Meta
	name, usage, synopsis string
	groups                bool
	act                   func(client *api.Client, d *api.Deployment, groups []string) (*api.DeploymentUpdateResponse, error)
	done, doing           string
}

func (c *deploymentWrite) Help() string {
	options := `
Options:

  -detach
    Return at once instead of monitoring the evaluation.
`
	if c.groups {
		options += `
  -group=<name>
    Promote only this task group's canaries; may be repeated. Without it
    every group is promoted.
`
	}
	return helpText(c.usage, options)
}

func (c *deploymentWrite) Synopsis() string { return c.synopsis }

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func (c *deploymentWrite) Run(args []string) int {
	var detach bool
	var groups stringList
	fs := c.FlagSet(c.name)
	fs.BoolVar(&detach, "detach", false, "")
	if c.groups {
		fs.Var(&groups, "group", "")
	}
	return c.run(fs, args, &detach, &groups)
}

func (c *deploymentWrite) run(fs *flag.FlagSet, args []string, detach *bool, groups *stringList) int {
	pos, client, code, ok := c.connect(fs, args, "<deployment>")
	if !ok {
		return code
	}
	d, ok := c.resolveDeployment(client, pos[0])
	if !ok {
		return 1
	}
	resp, err := c.act(client, d, *groups)
	if err != nil {
		return c.fail("Error %s deployment: %v", c.doing, err)
	}
	c.Ui.Output(fmt.Sprintf("Deployment %q %s", d.ID, c.done))
	if resp.EvalID == "" {
		return 0
	}
	return c.finishEval(client, resp.EvalID, *detach, resp.EvalID)
}

func promote(client *api.Client, d *api.Deployment, groups []string) (*api.DeploymentUpdateResponse, error) {
	if len(groups) == 0 {
		resp, _, err := client.Deployments().PromoteAll(d.ID, nil)
		return resp, err
	}
	resp, _, err := client.Deployments().PromoteGroups(d.ID, groups, nil)
	return resp, err
}

func newDeploymentPromote(m Meta) *deploymentWrite {
	return &deploymentWrite{Meta: m, name: "deployment promote", groups: true, done: "promoted", doing: "promoting",
		synopsis: "Promote a deployment's canaries",
		usage: `
Usage: nomad deployment promote [options] <deployment>

  Promote the canaries of a deployment: the rollout goes on and replaces the
  remaining allocations. Every canary of a promoted group must be healthy.
`, act: promote}
}

func newDeploymentFail(m Meta) *deploymentWrite {
	return &deploymentWrite{Meta: m, name: "deployment fail", done: "failed", doing: "failing", synopsis: "Mark a deployment failed",
		usage: `
Usage: nomad deployment fail [options] <deployment>

  Mark a running deployment failed: nothing more of it is placed. Unlike a
  failure the servers find, this never reverts the job.
`, act: func(client *api.Client, d *api.Deployment, _ []string) (*api.DeploymentUpdateResponse, error) {
			resp, _, err := client.Deployments().Fail(d.ID, nil)
			return resp, err
		}}
}

func newDeploymentPause(m Meta, pause bool) *deploymentWrite {
	c := &deploymentWrite{Meta: m, name: "deployment pause", done: "paused", doing: "pausing", synopsis: "Pause a deployment",
		usage: `
Usage: nomad deployment pause [options] <deployment>

  Pause a running deployment: what runs keeps running, nothing more is
  replaced until it is resumed.
`}
	if !pause {
		c.name, c.done, c.doing, c.synopsis = "deployment resume", "resumed", "resuming", "Resume a paused deployment"
		c.usage = `
Usage: nomad deployment resume [options] <deployment>

  Resume a paused deployment.
`
	}
	c.act = func(client *api.Client, d *api.Deployment, _ []string) (*api.DeploymentUpdateResponse, error) {
		resp, _, err := client.Deployments().Pause(d.ID, pause, nil)
		return resp, err
	}
	return c
}

// newJobPromote promotes the canaries of a job's newest deployment.
func newJobPromote(m Meta) cli.Command {
	var detach bool
	var groups stringList
	return &command{Meta: m, name: "job promote", synopsis: "Promote a job's canaries",
		usage: `
Usage: nomad job promote [options] <job>

  Promote the canaries of the job's newest deployment.
`,
		options: []option{
			boolOpt(&detach, "-detach", "Return at once instead of monitoring the evaluation."),
			valueOpt(&groups, "-group=<name>", "Promote only this task group's canaries; may be repeated."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			_, client, jobID, code, ok := c.connectJob(fs, args, "<job>")
			if !ok {
				return code
			}
			d, _, err := client.Jobs().LatestDeployment(jobID, nil)
			if err != nil {
				return c.fail("Error retrieving deployment: %v", err)
			}
			if d == nil {
				return c.fail("Job %q has no deployment to promote", jobID)
			}
			resp, err := promote(client, d, groups)
			if err != nil {
				return c.fail("Error promoting deployment: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("Deployment %q promoted", d.ID))
			return c.finishEval(client, resp.EvalID, detach, resp.EvalID)
		},
	}
}
