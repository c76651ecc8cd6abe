package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

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
