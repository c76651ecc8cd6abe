package command

import (
	"github.com/hashicorp/nomad/api"
)

// JobInspectCommand prints a job as the API's JSON.
type JobInspectCommand struct {
	Meta
}

func (c *JobInspectCommand) Help() string {
	return helpText(`
Usage: nomad job inspect [options] <job>

  Print a job as JSON wrapped in {"Job": ...}, the same shape "nomad job
  run -json" accepts, so the output can be edited and submitted again.
`, `
Inspect Options:

  -version=<version>
    Print that version of the job instead of the current one.

  -json
    Accepted for symmetry with other commands; output is always JSON.
`)
}

func (c *JobInspectCommand) Synopsis() string { return "Print a job as JSON" }

func (c *JobInspectCommand) Run(args []string) int {
	var asJSON bool
	version := optUint{}
	fs := c.FlagSet("job inspect")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.Var(&version, "version", "")
	_, client, jobID, code, ok := c.connectJob(fs, args, "<job>")
	if !ok {
		return code
	}

	var job *api.Job
	if version.set {
		versions, _, _, err := client.Jobs().Versions(jobID, false, nil)
		if err != nil {
			return c.fail("Error querying job versions: %v", err)
		}
		for _, v := range versions {
			if u64(v.Version) == version.v {
				job = v
			}
		}
		if job == nil {
			return c.fail("Job %q has no version %d", jobID, version.v)
		}
	} else {
		var err error
		job, _, err = client.Jobs().Info(jobID, nil)
		if err != nil {
			return c.fail("Error querying job: %v", err)
		}
	}
	return c.printJSON(struct{ Job *api.Job }{job})
}
