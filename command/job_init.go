package command

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/hashicorp/cli"
)

// newJobInit writes an example job file.
func newJobInit(m Meta) cli.Command {
	var short bool
	return &command{Meta: m, name: "job init", synopsis: "Create an example job file",
		usage: `
Usage: nomad job init [options] [filename]

  Write an example job file to get started with, to example.nomad.hcl or the
  filename given. An existing file is never overwritten. No agent is
  contacted.
`,
		options: []option{
			boolOpt(&short, "-short", "Write the example without its explanatory comments."),
		},
		run: func(c *command, fs *flag.FlagSet, args []string) int {
			pos, code, ok := c.parseAtMostOne(fs, args, "This command takes at most one argument: [filename]")
			if !ok {
				return code
			}
			name := defaultInitName
			if len(pos) == 1 {
				name = pos[0]
			}
			body := exampleJobLong
			if short {
				body = exampleJobShort
			}
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, os.ErrExist) {
				return c.fail("Job '%s' already exists", name)
			}
			if err != nil {
				return c.fail("Failed to write '%s': %v", name, err)
			}
			if _, err := f.WriteString(body); err != nil {
				f.Close()
				return c.fail("Failed to write '%s': %v", name, err)
			}
			if err := f.Close(); err != nil {
				return c.fail("Failed to write '%s': %v", name, err)
			}
			c.Ui.Output(fmt.Sprintf("Example job file written to %s", name))
			return 0
		},
	}
}

const defaultInitName = "example.nomad.hcl"

const exampleJobShort = `job "example" {
  type = "service"

  group "web" {
    count = 1

    network {
      port "http" {}
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 1; done"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`

const exampleJobLong = `# An example job to start from. Register it with "nomad job run" and follow
# it with "nomad job status example".
job "example" {
  # Where the job may run: the datacenters of the nodes that may take it.
  datacenters = ["*"]

  # "service" jobs run until stopped; "batch" jobs run to completion;
  # "system" jobs run one allocation on every eligible node.
  type = "service"

  # How a new version replaces the running one: one allocation at a time,
  # each healthy for 10s before the next.
  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "3m"
    auto_revert      = false
  }

  # A group is what is placed together on one node; count is how many copies.
  group "web" {
    count = 1

    # A dynamic port named "http", offered to the task as NOMAD_PORT_http.
    network {
      port "http" {}
    }

    # Restart a failed task in place a few times before the allocation fails.
    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    # A task is one process run by a driver.
    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 1; done"]
      }

      # What the task is given: CPU in MHz, memory in MB.
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`
