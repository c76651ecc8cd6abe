package command

import (
	"flag"
	"fmt"
	"io"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// dispatchPayloadLimit is the server's limit (structs.DispatchPayloadSizeLimit), checked here
// too so a large file is refused before it is sent.
const dispatchPayloadLimit = 16 * 1024

// JobDispatchCommand creates a child of a parameterized job.
type JobDispatchCommand struct {
	Meta

	// Stdin is read when the input argument is "-"; nil means os.Stdin.
	Stdin io.Reader
}

func (c *JobDispatchCommand) Help() string {
	return helpText(`
Usage: nomad job dispatch [options] <parameterized job> [input source]

  Dispatch creates an instance of a parameterized job. A payload may be given
  as a file path, or "-" to read it from standard input; it is written to the
  file the job's dispatch_payload block names in each task's local directory.
  Metadata keys must be ones the job declares in meta_required or
  meta_optional.

  Unless -detach is given, the command follows the evaluation of the
  dispatched job and reports its status.
`, `
Dispatch Options:

  -meta <key>=<value>
    Metadata for the dispatched job. Repeatable.

  -idempotency-token
    A token: a second dispatch with the same token returns the job the first
    one created (while it is not stopped) instead of creating another.

  -id-prefix-template
    A string placed in the dispatched job's ID, after "dispatch-".

  -priority
    Priority of the dispatched job, instead of the parameterized job's.

  -detach
    Print the dispatched job's ID and evaluation ID and return without
    monitoring.
`)
}

func (c *JobDispatchCommand) Synopsis() string { return "Dispatch an instance of a parameterized job" }

func (c *JobDispatchCommand) Run(args []string) int {
	var detach bool
	var token, prefix string
	var priority int
	meta := varFlag{}
	fs := c.FlagSet("job dispatch")
	fs.BoolVar(&detach, "detach", false, "")
	fs.StringVar(&token, "idempotency-token", "", "")
	fs.StringVar(&prefix, "id-prefix-template", "", "")
	fs.IntVar(&priority, "priority", 0, "")
	fs.Var(meta, "meta", "")
	pos, code, ok := c.parse(fs, args)
	if !ok {
		return code
	}
	if len(pos) < 1 || len(pos) > 2 {
		return c.fail("This command takes one or two arguments: <parameterized job> [input source]")
	}
	var payload []byte
	if len(pos) == 2 {
		var err error
		if payload, err = readInput(pos[1], c.Stdin); err != nil {
			return c.fail("Error reading input data: %v", err)
		}
		if len(payload) > dispatchPayloadLimit {
			return c.fail("Payload exceeds maximum size; %d > %d", len(payload), dispatchPayloadLimit)
		}
	}
	client, jobID, ok := c.clientForJob(pos[0])
	if !ok {
		return 1
	}
	var wopts *api.WriteOptions
	if token != "" {
		wopts = &api.WriteOptions{IdempotencyToken: token}
	}
	resp, _, err := client.Jobs().DispatchOpts(&api.DispatchOptions{
		JobID: jobID, Meta: meta, Payload: payload, IdPrefixTemplate: prefix, Priority: priority,
	}, wopts)
	if err != nil {
		return c.fail("Failed to dispatch job: %v", err)
	}
	rows := []string{fmt.Sprintf("Dispatched Job ID|%s", resp.DispatchedJobID)}
	if resp.EvalID != "" {
		rows = append(rows, fmt.Sprintf("Evaluation ID|%s", resp.EvalID))
	}
	c.Ui.Output(formatKV(rows))
	if detach || resp.EvalID == "" {
		return 0
	}
	c.Ui.Output("")
	return c.monitor(client, resp.EvalID)
}

// newJobPeriodicForce launches a periodic job's child now.
func newJobPeriodicForce(m Meta) cli.Command {
	var detach bool
	return &command{Meta: m, name: "job periodic force", synopsis: "Force the launch of a periodic job",
		usage: `
Usage: nomad job periodic force [options] <job>

  Launch a child of a periodic job now, whatever its schedule, as the
  schedule would launch it (prohibit_overlap is not considered). Needs the
  dispatch-job capability.

  Unless -detach is given, the command follows the child's evaluation and
  reports its status.
`,
		heading: "Periodic Force",
		options: []option{
			boolOpt(&detach, "-detach", "Print the evaluation ID and return without monitoring."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			_, client, jobID, code, ok := c.connectJob(fs, args, "<job>")
			if !ok {
				return code
			}
			evalID, _, err := client.Jobs().PeriodicForce(jobID, nil)
			if err != nil {
				return c.fail("Error forcing periodic job %q: %v", jobID, err)
			}
			if detach {
				c.Ui.Output("Force periodic successful")
				c.Ui.Output("Evaluation ID: " + evalID)
				return 0
			}
			return c.monitor(client, evalID)
		},
	}
}
