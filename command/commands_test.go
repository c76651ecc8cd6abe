package command

import (
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

// cliCase is one run of a command against a fake agent and everything it
// must print. Tables of them pin each command's exact output and exit code,
// so that the commands' shared helpers can change without users noticing.
type cliCase struct {
	name   string
	routes map[string]route
	stdin  string
	args   []string
	code   int
	stdout string
	stderr string
}

func runCLICases(t *testing.T, cases []cliCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, tc.routes)
			code, out, errOut := runCLI(t, fa.srv.URL, tc.stdin, tc.args...)
			must.Eq(t, tc.code, code, must.Sprint(errOut))
			must.Eq(t, tc.stdout, out)
			must.Eq(t, tc.stderr, errOut)
		})
	}
}

// TestCommands_Arguments covers what commands check before they talk to the
// agent: argument counts, required flags, flag errors and -help.
func TestCommands_Arguments(t *testing.T) {
	runCLICases(t, []cliCase{
		{
			name:   "job run",
			args:   []string{"job", "run"},
			code:   1,
			stderr: "This command takes one argument: <path>\n",
		},
		{
			name:   "job validate",
			args:   []string{"job", "validate", "a", "b"},
			code:   1,
			stderr: "This command takes one argument: <path>\n",
		},
		{
			name:   "job stop",
			args:   []string{"job", "stop"},
			code:   1,
			stderr: "This command takes one argument: <job>\n",
		},
		{
			name:   "job status",
			args:   []string{"job", "status", "a", "b"},
			code:   1,
			stderr: "This command takes either no arguments or one: <job>\n",
		},
		{
			name:   "status",
			args:   []string{"status", "a", "b"},
			code:   1,
			stderr: "This command takes either no arguments or one: <identifier>\n",
		},
		{
			name:   "job inspect",
			args:   []string{"job", "inspect"},
			code:   1,
			stderr: "This command takes one argument: <job>\n",
		},
		{
			name:   "job history",
			args:   []string{"job", "history", "a", "b"},
			code:   1,
			stderr: "This command takes one argument: <job>\n",
		},
		{
			name:   "job revert",
			args:   []string{"job", "revert", "web"},
			code:   1,
			stderr: "This command takes two arguments: <job> <version|tag>\n",
		},
		{
			name:   "job scale",
			args:   []string{"job", "scale", "web"},
			code:   1,
			stderr: "This command takes two or three arguments: <job> [<group>] <count>\n",
		},
		{
			name:   "job tag apply",
			args:   []string{"job", "tag", "apply", "-name", "v1"},
			code:   1,
			stderr: "This command takes one argument: <job>\n",
		},
		{
			name:   "job tag apply without name",
			args:   []string{"job", "tag", "apply", "web"},
			code:   1,
			stderr: "A tag name is required: -name=<name>\n",
		},
		{
			name:   "job tag unset",
			args:   []string{"job", "tag", "unset", "-name", "v1", "a", "b"},
			code:   1,
			stderr: "This command takes one argument: <job>\n",
		},
		{
			name:   "job tag unset without name",
			args:   []string{"job", "tag", "unset", "web"},
			code:   1,
			stderr: "A tag name is required: -name=<name>\n",
		},
		{
			name:   "job purged",
			args:   []string{"job", "purged", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name:   "job purged invalid since",
			args:   []string{"job", "purged", "-since", "yesterday"},
			code:   1,
			stderr: "Invalid -since \"yesterday\": expected an RFC 3339 time such as 2026-01-02T15:04:05Z\n",
		},
		{
			name:   "job restore",
			args:   []string{"job", "restore"},
			code:   1,
			stderr: "This command takes one argument: <record-id>\n",
		},
		{
			name:   "event stream",
			args:   []string{"event", "stream", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name:   "event sink register two files",
			args:   []string{"event", "sink", "register", "a", "b"},
			code:   1,
			stderr: "This command takes at most one argument: <file>\n",
		},
		{
			name:   "event sink register without an ID",
			args:   []string{"event", "sink", "register", "-url", "http://x"},
			code:   1,
			stderr: "A sink ID is required (-id or the file's id)\n",
		},
		{
			name:   "event sink list",
			args:   []string{"event", "sink", "list", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name:   "event sink status",
			args:   []string{"event", "sink", "status"},
			code:   1,
			stderr: "This command takes one argument: <id>\n",
		},
		{
			name:   "event sink deregister",
			args:   []string{"event", "sink", "deregister"},
			code:   1,
			stderr: "This command takes one argument: <id>\n",
		},
		{
			name:   "job stop bad address",
			args:   []string{"job", "stop", "-address=://bad", "web"},
			code:   1,
			stderr: "Error initializing client: invalid address '://bad': parse \"://bad\": missing protocol scheme\n",
		},
		{
			name:   "job history bad flag",
			args:   []string{"job", "history", "-bogus", "web"},
			code:   1,
			stderr: "Error parsing flags: flag provided but not defined: -bogus\n",
		},
		{
			name:   "eval delete with ID and filter",
			args:   []string{"eval", "delete", "-filter", "true", "abcd"},
			code:   1,
			stderr: "Give either an evaluation ID or -filter, not both\n",
		},
		{
			name:   "operator api",
			args:   []string{"operator", "api"},
			code:   1,
			stderr: "This command takes one argument: <path>\n",
		},
		{
			name:   "operator debug interval",
			args:   []string{"operator", "debug", "-interval", "0s"},
			code:   1,
			stderr: "Invalid -interval 0s: must be positive\n",
		},
		{
			name:   "operator client-state",
			args:   []string{"operator", "client-state"},
			code:   1,
			stderr: "This command takes one argument: <path>\n",
		},
		{
			name:   "var init",
			args:   []string{"var", "init", "a", "b"},
			code:   1,
			stderr: "This command takes either no arguments or one: <filename>\n",
		},
		{
			name:   "node pool jobs",
			args:   []string{"node", "pool", "jobs"},
			code:   1,
			stderr: "This command takes one argument: <pool>\n",
		},
		{
			name:   "job scaling-events",
			args:   []string{"job", "scaling-events"},
			code:   1,
			stderr: "This command takes one argument: <job>\n",
		},
		{
			name:   "volume status type",
			args:   []string{"volume", "status", "-type", "nfs"},
			code:   1,
			stderr: "Invalid -type \"nfs\": one of host, csi\n",
		},
		{
			name: "job inspect help",
			args: []string{"job", "inspect", "-help"},
			code: cli.RunResultHelp,
		},
	})
}
