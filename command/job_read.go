package command

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
)

// newJobHistory lists a job's versions.
func newJobHistory(m Meta) cli.Command {
	var diffs, full, asJSON bool
	version := optUint{}
	return &command{Meta: m, name: "job history", synopsis: "List the versions of a job",
		usage: `
Usage: nomad job history [options] <job>

  List the versions of a job, newest first, with their stability, submit
  time and tag. A stopped job keeps its history until it is purged or
  garbage collected.
`,
		options: []option{
			boolOpt(&diffs, "-p", "Show what changed in each version compared with the one before it."),
			boolOpt(&full, "-full", "Print each version's full job as JSON."),
			valueOpt(&version, "-version=<version>", "Show only that version."),
			boolOpt(&asJSON, "-json", "Print the versions as JSON."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			_, client, jobID, code, ok := c.connectJob(fs, args, "<job>")
			if !ok {
				return code
			}
			versions, jobDiffs, _, err := client.Jobs().Versions(jobID, diffs, nil)
			if err != nil {
				return c.fail("Error querying job versions: %v", err)
			}

			// Diffs[i] compares Versions[i] with the version before it, so the oldest
			// version has none.
			diffOf := func(i int) *api.JobDiff {
				if i < len(jobDiffs) {
					return jobDiffs[i]
				}
				return nil
			}
			type entry struct {
				job  *api.Job
				diff *api.JobDiff
			}
			var entries []entry
			for i, v := range versions {
				if version.set && u64(v.Version) != version.v {
					continue
				}
				entries = append(entries, entry{v, diffOf(i)})
			}
			if version.set && len(entries) == 0 {
				return c.fail("Job %q has no version %d", jobID, version.v)
			}

			if asJSON {
				out := make([]any, len(entries))
				for i, e := range entries {
					if diffs {
						out[i] = struct {
							Job  *api.Job
							Diff *api.JobDiff
						}{e.job, e.diff}
					} else {
						out[i] = e.job
					}
				}
				return c.printJSON(out)
			}

			blocks := make([]string, 0, len(entries))
			for _, e := range entries {
				rows := []string{
					fmt.Sprintf("Version|%d", u64(e.job.Version)),
					fmt.Sprintf("Stable|%t", boolv(e.job.Stable)),
					"Submit Date|" + formatUnixNano(int64PtrVal(e.job.SubmitTime)),
				}
				if t := e.job.VersionTag; t != nil {
					rows = append(rows, "Tag Name|"+t.Name)
					if t.Description != "" {
						rows = append(rows, "Tag Description|"+t.Description)
					}
				}
				if diffs && e.diff != nil {
					rows = append(rows, "Diff|")
				}
				block := formatKV(rows)
				if diffs && e.diff != nil {
					block += "\n" + formatJobDiff(e.diff)
				}
				if full {
					out, err := prettyJSON(e.job)
					if err != nil {
						return c.fail("Error encoding job: %v", err)
					}
					block += "\n" + out
				}
				blocks = append(blocks, block)
			}
			c.Ui.Output(strings.Join(blocks, "\n\n"))
			return 0
		},
	}
}

// diffMarker is the prefix for each kind of change.
func diffMarker(t string) string {
	switch t {
	case "Added":
		return "+"
	case "Deleted":
		return "-"
	case "Edited":
		return "+/-"
	default:
		return ""
	}
}

// formatJobDiff renders a job diff as an indented outline, one changed field
// per line, skipping everything that did not change.
func formatJobDiff(d *api.JobDiff) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s Job: %q\n", diffMarker(d.Type), d.ID)
	writeFieldDiffs(&b, d.Fields, 1)
	writeObjectDiffs(&b, d.Objects, 1)
	for _, tg := range d.TaskGroups {
		if tg.Type == "None" {
			continue
		}
		fmt.Fprintf(&b, "%s Task Group: %q\n", diffMarker(tg.Type), tg.Name)
		writeFieldDiffs(&b, tg.Fields, 1)
		writeObjectDiffs(&b, tg.Objects, 1)
		for _, t := range tg.Tasks {
			if t.Type == "None" {
				continue
			}
			fmt.Fprintf(&b, "  %s Task: %q\n", diffMarker(t.Type), t.Name)
			writeFieldDiffs(&b, t.Fields, 2)
			writeObjectDiffs(&b, t.Objects, 2)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func writeFieldDiffs(b *strings.Builder, fields []*api.FieldDiff, depth int) {
	pad := strings.Repeat("  ", depth)
	for _, f := range fields {
		switch f.Type {
		case "Added":
			fmt.Fprintf(b, "%s+ %s: %q\n", pad, f.Name, f.New)
		case "Deleted":
			fmt.Fprintf(b, "%s- %s: %q\n", pad, f.Name, f.Old)
		case "Edited":
			fmt.Fprintf(b, "%s+/- %s: %q => %q\n", pad, f.Name, f.Old, f.New)
		}
	}
}

func writeObjectDiffs(b *strings.Builder, objs []*api.ObjectDiff, depth int) {
	pad := strings.Repeat("  ", depth)
	for _, o := range objs {
		if o.Type == "None" {
			continue
		}
		fmt.Fprintf(b, "%s%s %s {\n", pad, diffMarker(o.Type), o.Name)
		writeFieldDiffs(b, o.Fields, depth+1)
		writeObjectDiffs(b, o.Objects, depth+1)
		fmt.Fprintf(b, "%s}\n", pad)
	}
}

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

// newJobAllocs lists a job's allocations.
func newJobAllocs(m Meta) cli.Command {
	var all, asJSON bool
	return &command{Meta: m, name: "job allocs", synopsis: "List allocations for a job",
		usage: `
Usage: nomad job allocs [options] <job>

  List the allocations of a job.
`,
		options: []option{
			boolOpt(&all, "-all", "Include allocations of earlier instances of the job with the same ID (a\njob purged and registered again)."),
			boolOpt(&asJSON, "-json", "Output the allocations as JSON."),
		},
		args: []string{"<job>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			allocs, _, err := client.Jobs().Allocations(pos[0], all, nil)
			if err != nil {
				return c.fail("Error retrieving allocations: %v", err)
			}
			return printResult(&c.Meta, allocs, asJSON, func(a []*api.AllocationListStub) string {
				return formatAllocs(a, time.Now())
			})
		},
	}
}

// newJobDeployments lists a job's deployments.
func newJobDeployments(m Meta) cli.Command {
	var latest, asJSON, all bool
	return &command{Meta: m, name: "job deployments", synopsis: "List deployments for a job",
		usage: `
Usage: nomad job deployments [options] <job>

  List the deployments of a job, newest first.
`,
		options: []option{
			boolOpt(&latest, "-latest", "Show only the latest deployment."),
			boolOpt(&all, "-all", "Include deployments of earlier instances of the job with the same ID."),
			boolOpt(&asJSON, "-json", "Output the deployments as JSON."),
		},
		args: []string{"<job>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			if latest {
				d, _, err := client.Jobs().LatestDeployment(pos[0], nil)
				if err != nil {
					return c.fail("Error retrieving deployments: %v", err)
				}
				if d == nil {
					if asJSON {
						return c.printJSON(nil)
					}
					c.Ui.Output("No deployment found")
					return 0
				}
				return printResult(&c.Meta, d, asJSON, formatDeployment)
			}
			list, _, err := client.Jobs().Deployments(pos[0], all, nil)
			if err != nil {
				return c.fail("Error retrieving deployments: %v", err)
			}
			return printResult(&c.Meta, list, asJSON, formatDeploymentList)
		},
	}
}
