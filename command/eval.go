package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

const evalHelp = `
Usage: nomad eval <subcommand> [options]

  Inspect evaluations: the scheduler's units of work.
`

// newEvalList lists evaluations.
func newEvalList(m Meta) cli.Command {
	var jobID, status string
	var asJSON bool
	return &command{Meta: m, name: "eval list", synopsis: "List evaluations",
		usage: `
Usage: nomad eval list [options]

  List evaluations, newest first. When ACLs are enabled, this needs
  read-job in the namespace.
`,
		options: []option{
			flagOpt(&jobID, "", "-job <id>", "Only the evaluations of this job."),
			flagOpt(&status, "", "-status <status>", "Only evaluations with this status (pending, blocked, complete, failed,\ncanceled)."),
			boolOpt(&asJSON, "-json", "Print the evaluations as the API's JSON."),
		},
		withClient: func(c *command, client *api.Client, _ []string) int {
			q := &api.QueryOptions{Params: map[string]string{}}
			if jobID != "" {
				q.Params["job"] = jobID
			}
			if status != "" {
				q.Params["status"] = status
			}
			evals, _, err := client.Evaluations().List(q)
			if err != nil {
				return c.fail("Error querying evaluations: %v", err)
			}
			if asJSON {
				return c.printJSON(evals)
			}
			if len(evals) == 0 {
				c.Ui.Output("No evals found")
				return 0
			}
			// Newest first, as upstream lists them.
			sort.SliceStable(evals, func(i, j int) bool { return evals[i].CreateIndex > evals[j].CreateIndex })
			rows := []string{"ID|Priority|Triggered By|Job ID|Namespace|Node ID|Status|Placement Failures"}
			for _, e := range evals {
				rows = append(rows, fmt.Sprintf("%s|%d|%s|%s|%s|%s|%s|%t", shortID(e.ID), e.Priority, e.TriggeredBy,
					e.JobID, e.Namespace, orNone(shortID(e.NodeID)), e.Status, len(e.FailedTGAllocs) > 0))
			}
			c.Ui.Output(formatList(rows))
			return 0
		},
	}
}

// newEvalStatus shows one evaluation.
func newEvalStatus(m Meta) cli.Command {
	var asJSON bool
	return &command{Meta: m, name: "eval status", synopsis: "Show an evaluation",
		usage: `
Usage: nomad eval status [options] <evaluation>

  Show an evaluation: what triggered it, its status, the allocations it
  could not place and why, and the evaluations linked to it.

  <evaluation> is an evaluation ID or a unique prefix of at least two
  characters.
`,
		options: []option{
			boolOpt(&asJSON, "-json", "Print the evaluation as the API's JSON."),
		},
		args: []string{"<evaluation>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			id, ok := c.resolveEval(client, pos[0])
			if !ok {
				return 1
			}
			eval, _, err := client.Evaluations().Info(id, &api.QueryOptions{Params: map[string]string{"related": "true"}})
			if err != nil {
				return c.fail("Error querying evaluation %q: %v", id, err)
			}
			if asJSON {
				return c.printJSON(eval)
			}
			c.Ui.Output(formatEvalStatus(eval))
			return 0
		},
	}
}

func formatEvalStatus(e *api.Evaluation) string {
	var b strings.Builder
	b.WriteString(formatKV([]string{
		"ID|" + e.ID,
		"Create Time|" + formatUnixNano(e.CreateTime),
		"Modify Time|" + formatUnixNano(e.ModifyTime),
		"Status|" + e.Status,
		"Status Description|" + orNone(e.StatusDescription),
		"Type|" + e.Type,
		"TriggeredBy|" + e.TriggeredBy,
		"Job ID|" + e.JobID,
		"Namespace|" + e.Namespace,
		fmt.Sprintf("Priority|%d", e.Priority),
		fmt.Sprintf("Placement Failures|%t", len(e.FailedTGAllocs) > 0),
		"Previous Eval|" + orNone(e.PreviousEval),
		"Next Eval|" + orNone(e.NextEval),
		"Blocked Eval|" + orNone(e.BlockedEval),
	}))
	if len(e.RelatedEvals) > 0 {
		b.WriteString("\n\nRelated Evaluations\n")
		rows := []string{"ID|Priority|Triggered By|Status"}
		for _, r := range e.RelatedEvals {
			rows = append(rows, fmt.Sprintf("%s|%d|%s|%s", shortID(r.ID), r.Priority, r.TriggeredBy, r.Status))
		}
		b.WriteString(formatList(rows))
	}
	if len(e.FailedTGAllocs) > 0 {
		groups := make([]string, 0, len(e.FailedTGAllocs))
		for g := range e.FailedTGAllocs {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		b.WriteString("\n\nFailed Placements")
		for _, g := range groups {
			m := e.FailedTGAllocs[g]
			fmt.Fprintf(&b, "\nTask Group %q (failed to place %d allocation(s)):", g, m.CoalescedFailures+1)
			reasons := make([]string, 0, len(m.ConstraintFiltered))
			for r, n := range m.ConstraintFiltered {
				reasons = append(reasons, fmt.Sprintf("  * Constraint %q: %d nodes excluded by filter", r, n))
			}
			for d, n := range m.DimensionExhausted {
				reasons = append(reasons, fmt.Sprintf("  * Resources exhausted on %d nodes: %s", n, d))
			}
			sort.Strings(reasons)
			for _, r := range reasons {
				b.WriteString("\n" + r)
			}
		}
	}
	return b.String()
}

// resolveEval turns an evaluation ID or unique ID prefix (two characters at least) into the
// exact ID, the failure already reported.
func (m *Meta) resolveEval(client *api.Client, prefix string) (string, bool) {
	if len(prefix) < 2 {
		m.fail("Evaluation ID must have at least two characters")
		return "", false
	}
	stubs, _, err := client.Evaluations().PrefixList(prefix)
	if err != nil {
		m.fail("Error querying evaluation prefix %q: %v", prefix, err)
		return "", false
	}
	for _, e := range stubs {
		if e.ID == prefix {
			return e.ID, true
		}
	}
	switch len(stubs) {
	case 0:
		m.fail("No evaluation(s) with prefix or ID %q found", prefix)
		return "", false
	case 1:
		return stubs[0].ID, true
	}
	ids := make([]string, len(stubs))
	for i, e := range stubs {
		ids[i] = e.ID
	}
	sort.Strings(ids)
	m.fail("Prefix %q matched multiple evaluations:\n%s", prefix, strings.Join(ids, "\n"))
	return "", false
}
