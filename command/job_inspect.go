package command

import (
	"flag"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newJobInspect prints a job as the API's JSON.
func newJobInspect(m Meta) cli.Command {
	var asJSON bool
	version := optUint{}
	return &command{Meta: m, name: "job inspect", synopsis: "Print a job as JSON",
		usage: `
Usage: nomad job inspect [options] <job>

  Print a job as JSON wrapped in {"Job": ...}, the same shape "nomad job
  run -json" accepts, so the output can be edited and submitted again.
`,
		options: []option{
			valueOpt(&version, "-version=<version>", "Print that version of the job instead of the current one."),
			boolOpt(&asJSON, "-json", "Accepted for symmetry with other commands; output is always JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
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
		},
	}
}
