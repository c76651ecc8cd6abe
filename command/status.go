package command

// StatusCommand is the short form of "job status": alone it lists jobs, with
// an ID it shows that job.
type StatusCommand struct {
	Meta
}

func (c *StatusCommand) Help() string {
	return helpText(`
Usage: nomad status [options] [job]

  Without an argument, list the jobs of the namespace. With a job ID, show
  that job; this is the same as "nomad job status".
`, jobStatusOptions)
}

func (c *StatusCommand) Synopsis() string { return "List jobs or show one" }

func (c *StatusCommand) Run(args []string) int {
	js := &JobStatusCommand{Meta: c.Meta}
	return js.Run(args)
}
