package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// AllocStatusCommand shows one allocation and the states of its tasks.
type AllocStatusCommand struct {
	Meta

	// now replaces the clock in tests.
	now    func() time.Time
	short  bool
	stats  bool
	asJSON bool
}

func (c *AllocStatusCommand) Help() string {
	return helpText(`
Usage: nomad alloc status [options] <allocation>

  Show an allocation: where it runs, its desired and client statuses, and
  the state of each of its tasks with their recent events.

  <allocation> is an allocation ID or a unique prefix of at least two
  characters. When ACLs are enabled, this needs read-job in the
  allocation's namespace.
`, optionsHelp("Status", c.options()))
}

func (c *AllocStatusCommand) options() []option {
	return []option{
		boolOpt(&c.short, "-short", "Show the allocation's header and the task states, without their events."),
		boolOpt(&c.stats, "-stats", "Also read the tasks' resource usage from the allocation's client and\nshow it beside what was allocated, with the memory and CPU breakdown."),
		boolOpt(&c.asJSON, "-json", "Print the allocation as the API's JSON."),
	}
}

func (c *AllocStatusCommand) Synopsis() string { return "Show an allocation and its tasks" }

func (c *AllocStatusCommand) Run(args []string) int {
	fs := c.flagSetWith("alloc status", c.options())
	pos, code, ok := c.parseArgs(fs, args, "<allocation>")
	if !ok {
		return code
	}
	client, alloc, ok := c.clientAlloc(pos[0], false)
	if !ok {
		return 1
	}
	if c.asJSON {
		return c.printJSON(alloc)
	}
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	var usage *api.AllocResourceUsage
	if c.stats && alloc.ClientStatus == "running" {
		var err error
		if usage, err = client.Allocations().Stats(alloc, nil); err != nil {
			// The allocation is still worth showing when its client cannot be reached.
			c.Ui.Warn(fmt.Sprintf("Couldn't retrieve the allocation's resource usage: %v", err))
		}
	}
	c.Ui.Output(formatAllocStatus(alloc, c.short, c.stats, usage, now()))
	return 0
}

// formatAllocStatus prints the allocation's header, its addresses and each task's state,
// resources (with usage when known) and recent events; short leaves out all but the states.
func formatAllocStatus(a *api.Allocation, short, stats bool, usage *api.AllocResourceUsage, now time.Time) string {
	var b strings.Builder
	kv := []string{
		"ID|" + a.ID,
		"Eval ID|" + shortID(a.EvalID),
		"Name|" + a.Name,
		"Namespace|" + a.Namespace,
		"Node ID|" + shortID(a.NodeID),
		"Node Name|" + a.NodeName,
		"Job ID|" + a.JobID,
		fmt.Sprintf("Job Version|%d", jobVersion(a)),
		"Client Status|" + a.ClientStatus,
		"Client Description|" + orNone(a.ClientDescription),
		"Desired Status|" + a.DesiredStatus,
		"Desired Description|" + orNone(a.DesiredDescription),
		"Created|" + formatAgo(time.Unix(0, a.CreateTime), now),
		"Modified|" + formatAgo(time.Unix(0, a.ModifyTime), now),
	}
	// Set once the servers placed an allocation in this one's stead (rescheduled after a
	// failure, migrated, updated destructively, replaced while its node was away), as
	// upstream prints it.
	if a.NextAllocation != "" {
		kv = append(kv, "Replacement Alloc ID|"+shortID(a.NextAllocation))
	}
	b.WriteString(formatKV(kv))
	if addrs := formatAllocAddresses(a); addrs != "" && !short {
		b.WriteString("\n\nAllocation Addresses:\n" + addrs)
	}
	tasks := make([]string, 0, len(a.TaskStates))
	for name := range a.TaskStates {
		tasks = append(tasks, name)
	}
	sort.Strings(tasks)
	for _, name := range tasks {
		ts := a.TaskStates[name]
		state := ts.State
		if ts.Failed {
			state += ", failed"
		}
		fmt.Fprintf(&b, "\n\nTask %q is %q", name, state)
		if ts.Restarts > 0 {
			fmt.Fprintf(&b, " (restarted %d times)", ts.Restarts)
		}
		if short {
			continue
		}
		var tu *api.TaskResourceUsage
		if usage != nil {
			tu = usage.Tasks[name]
		}
		if res := formatTaskResources(a, name, tu, stats); res != "" {
			b.WriteString("\n\nTask Resources:\n" + res + "\n")
		}
		if len(ts.Events) == 0 {
			continue
		}
		b.WriteString("\nRecent Events:\n")
		rows := []string{"Time|Type|Description"}
		// Newest first, as upstream shows them.
		for i := len(ts.Events) - 1; i >= 0; i-- {
			e := ts.Events[i]
			desc := e.DisplayMessage
			if desc == "" {
				desc = e.Message
			}
			rows = append(rows, formatUnixNano(e.Time)+"|"+e.Type+"|"+strings.ReplaceAll(desc, "|", "/"))
		}
		b.WriteString(formatList(rows))
	}
	return b.String()
}

func jobVersion(a *api.Allocation) uint64 {
	if a.Job == nil {
		return 0
	}
	return u64(a.Job.Version)
}
