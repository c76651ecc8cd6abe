package command

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newJobStart starts a stopped job again.
func newJobStart(m Meta) cli.Command {
	var detach bool
	return &command{Meta: m, name: "job start", synopsis: "Start a stopped job",
		usage: `
Usage: nomad job start [options] <job>

  Start a stopped job again: its last version is registered once more with
  stop cleared, and the scheduler places its allocations. A purged job is
  gone; see "nomad job restore".
`,
		options: []option{
			boolOpt(&detach, "-detach", "Return at once with the evaluation ID instead of following it."),
		},
		args: []string{"<job>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			jobID, ok := c.resolveJob(client, pos[0])
			if !ok {
				return 1
			}
			job, _, err := client.Jobs().Info(jobID, nil)
			if err != nil {
				return c.fail("Error retrieving job %q: %v", jobID, err)
			}
			if !boolv(job.Stop) {
				return c.fail("Job %q has not been stopped and has the following status: %s", jobID, str(job.Status))
			}
			job.Stop = new(false)
			var wopts *api.WriteOptions
			if ns := str(job.Namespace); ns != "" {
				wopts = &api.WriteOptions{Namespace: ns}
			}
			resp, _, err := client.Jobs().Register(job, wopts)
			if err != nil {
				return c.fail("Error starting job %q: %v", jobID, err)
			}
			if detach || resp.EvalID == "" {
				c.Ui.Output(fmt.Sprintf("Job %q started", jobID))
			}
			return c.finishEval(client, resp.EvalID, detach, "Evaluation ID: "+resp.EvalID)
		},
	}
}

// JobRestartCommand restarts the tasks of every running allocation of a job, in batches.
type JobRestartCommand struct {
	Meta
	// ctx ends the command between batches; the CLI ends it on an interrupt.
	ctx       context.Context
	batchSpec string
	batchWait time.Duration
	task      string
	yes       bool
}

func (c *JobRestartCommand) Help() string {
	return helpText(`
Usage: nomad job restart [options] <job>

  Restart the tasks of each running allocation of a job in place, a batch at
  a time. Allocations are not rescheduled; their tasks restart where they
  run.
`, optionsHelp("Restart", c.options()))
}

func (c *JobRestartCommand) options() []option {
	return []option{
		flagOpt(&c.batchSpec, "1", "-batch-size=<n|n%|all>", "How many allocations to restart at once: a number, a percentage of the\njob's running allocations, or \"all\". The default is 1."),
		flagOpt(&c.batchWait, 0, "-batch-wait=<duration>", "How long to wait between batches. The default is 0."),
		flagOpt(&c.task, "", "-task=<name>", "Restart only this task of each allocation."),
		boolOpt(&c.yes, "-yes", "Do not ask for confirmation."),
	}
}

func (c *JobRestartCommand) Synopsis() string { return "Restart or reschedule allocations for a job" }

func (c *JobRestartCommand) Run(args []string) int {
	fs := c.flagSetWith("job restart", c.options())
	pos, client, code, ok := c.connect(fs, args, "<job>")
	if !ok {
		return code
	}
	if c.batchWait < 0 {
		return c.fail("Invalid -batch-wait %s: must not be negative", c.batchWait)
	}
	jobID, ok := c.resolveJob(client, pos[0])
	if !ok {
		return 1
	}
	stubs, _, err := client.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return c.fail("Error retrieving allocations of job %q: %v", jobID, err)
	}
	var running []*api.AllocationListStub
	for _, a := range stubs {
		if a.DesiredStatus == "run" && a.ClientStatus == "running" {
			running = append(running, a)
		}
	}
	if len(running) == 0 {
		c.Ui.Output(fmt.Sprintf("No running allocations of job %q to restart", jobID))
		return 0
	}
	size, err := parseBatchSize(c.batchSpec, len(running))
	if err != nil {
		return c.fail("Invalid -batch-size %q: %v", c.batchSpec, err)
	}
	if !c.yes {
		proceed, code := c.confirm(fmt.Sprintf("Are you sure you want to restart %d allocations of job %q?", len(running), jobID), "Job restart cancelled")
		if !proceed {
			return code
		}
	}
	ctx := c.ctx
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	now := func() string { return formatTime(time.Now()) }
	failed := 0
	for start, batch := 0, 1; start < len(running); start, batch = start+size, batch+1 {
		if start > 0 && c.batchWait > 0 {
			c.Ui.Output(fmt.Sprintf("==> %s: Waiting %s before restarting the next batch", now(), c.batchWait))
			select {
			case <-time.After(c.batchWait):
			case <-ctx.Done():
				return c.fail("Job restart interrupted: %d of %d allocations restarted", start, len(running))
			}
		}
		end := min(start+size, len(running))
		c.Ui.Output(fmt.Sprintf("==> %s: Restarting batch %d of %d allocations", now(), batch, end-start))
		for _, a := range running[start:end] {
			alloc := &api.Allocation{ID: a.ID, NodeID: a.NodeID, Namespace: a.Namespace}
			q := &api.QueryOptions{Namespace: a.Namespace}
			var err error
			if c.task != "" {
				err = client.Allocations().Restart(alloc, c.task, q)
			} else {
				err = client.Allocations().RestartAllTasks(alloc, q)
			}
			if err != nil {
				failed++
				c.Ui.Error(fmt.Sprintf("    %s: Failed to restart allocation %q: %v", now(), shortID(a.ID), err))
				continue
			}
			c.Ui.Output(fmt.Sprintf("    %s: Restarted allocation %q for group %q", now(), shortID(a.ID), a.TaskGroup))
		}
	}
	if failed > 0 {
		return c.fail("==> %s: %d of %d allocations failed to restart", now(), failed, len(running))
	}
	c.Ui.Output(fmt.Sprintf("==> %s: Job restart finished", now()))
	return 0
}

// parseBatchSize reads -batch-size against n allocations: "all", "N" or "N%" (at least 1).
func parseBatchSize(spec string, n int) (int, error) {
	if spec == "all" {
		return n, nil
	}
	if p, ok := strings.CutSuffix(spec, "%"); ok {
		pct, err := strconv.Atoi(p)
		if err != nil || pct <= 0 || pct > 100 {
			return 0, fmt.Errorf("a percentage must be from 1%% to 100%%")
		}
		return max(1, n*pct/100), nil
	}
	v, err := strconv.Atoi(spec)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("must be a positive number, a percentage or \"all\"")
	}
	return v, nil
}
