package command

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

// TestLegacyAliases runs each legacy name and the command it stands for with the same flags
// against fake agents that answer alike: both must send the same requests (the call named in
// wantCall among them) and print the same, so a flag the alias drops, or an alias wired to
// the wrong command, fails.
func TestLegacyAliases(t *testing.T) {
	oneNode := nodeRoutes(map[string]route{
		"GET /v1/nodes":                    jsonBody(`[` + strings.SplitN(nodeListBody[1:], `},{`, 2)[0] + `}]`),
		"PUT /v1/node/" + nodeA + "/drain": jsonBody(drainResponse),
	})
	logRoutes := fsRoutes()
	logRoutes["GET /v1/client/fs/logs/"+execAllocID] = fakeLogs
	jobFile := writeFile(t, "good.nomad.hcl", exampleHCL)
	cases := []struct {
		alias, target []string
		routes        map[string]route
		wantCall      string
		deprecated    bool
	}{
		{
			alias:  []string{"exec", "-i=false", "-t=false", "-task", "sleep", "5a7c", "echo", "hi"},
			target: []string{"alloc", "exec", "-i=false", "-t=false", "-task", "sleep", "5a7c", "echo", "hi"},
			routes: map[string]route{
				"GET /v1/allocations":                                jsonBody(`[{"ID":"` + execAllocID + `"}]`),
				"GET /v1/allocation/" + execAllocID:                  jsonBody(execAllocJSON),
				"GET /v1/client/allocation/" + execAllocID + "/exec": fakeExec(t),
			},
			wantCall: "GET /v1/client/allocation/" + execAllocID + "/exec",
		},
		{
			alias:    []string{"alloc-status", "-json", "5a7c"},
			target:   []string{"alloc", "status", "-json", "5a7c"},
			routes:   fsRoutes(),
			wantCall: "GET /v1/allocation/" + execAllocID,
		},
		{
			alias:    []string{"eval-status", "-json", "9e1a"},
			target:   []string{"eval", "status", "-json", "9e1a"},
			routes:   map[string]route{"GET /v1/evaluations": jsonBody(`[]`)},
			wantCall: "GET /v1/evaluations",
		},
		{
			alias:    []string{"fs", "-stat", "5a7c", "web/local"},
			target:   []string{"alloc", "fs", "-stat", "5a7c", "web/local"},
			routes:   fsRoutes(),
			wantCall: "GET /v1/client/fs/stat/" + execAllocID,
		},
		{
			alias:  []string{"inspect", "-json", "web"},
			target: []string{"job", "inspect", "-json", "web"},
			routes: map[string]route{
				"GET /v1/jobs":    jsonBody(`[{"ID":"web","Namespace":"default"}]`),
				"GET /v1/job/web": jsonBody(`{"ID":"web","Name":"web","Type":"service"}`),
			},
			wantCall: "GET /v1/job/web",
		},
		{
			alias:    []string{"logs", "-stderr", "-tail", "-c", "2", "5a7c"},
			target:   []string{"alloc", "logs", "-stderr", "-tail", "-c", "2", "5a7c"},
			routes:   logRoutes,
			wantCall: "GET /v1/client/fs/logs/" + execAllocID,
		},
		{
			alias:    []string{"node-drain", "-enable", "-detach", "-yes", "-m", "patching", nodeA},
			target:   []string{"node", "drain", "-enable", "-detach", "-yes", "-m", "patching", nodeA},
			routes:   oneNode,
			wantCall: "PUT /v1/node/" + nodeA + "/drain",
		},
		{
			alias:    []string{"node-status", "-verbose", nodeA[:5]},
			target:   []string{"node", "status", "-verbose", nodeA[:5]},
			routes:   oneNode,
			wantCall: "GET /v1/node/" + nodeA,
		},
		{
			alias:    []string{"validate", "-var", "count=3", jobFile},
			target:   []string{"job", "validate", "-var", "count=3", jobFile},
			routes:   map[string]route{"PUT /v1/validate/job": jsonBody(`{"DriverConfigValidated":true,"ValidationErrors":null,"Error":"","Warnings":""}`)},
			wantCall: "PUT /v1/validate/job",
		},
		{
			alias:    []string{"start", "-detach", "web"},
			target:   []string{"job", "start", "-detach", "web"},
			routes:   map[string]route{"GET /v1/jobs": jsonBody(`[{"ID":"web","Namespace":"default"}]`)},
			wantCall: "GET /v1/job/web",
		},
		{
			alias:      []string{"client-config", "-servers"},
			target:     []string{"node", "config", "-servers"},
			routes:     map[string]route{"GET /v1/agent/servers": jsonBody(`["10.0.0.1:4647","10.0.0.2:4647"]`)},
			wantCall:   "GET /v1/agent/servers",
			deprecated: true,
		},
		{
			alias:  []string{"server-members", "-detailed"},
			target: []string{"server", "members", "-detailed"},
			routes: map[string]route{
				"GET /v1/agent/members": jsonBody(membersBody),
				"GET /v1/status/leader": jsonBody(`"10.0.0.1:4647"`),
			},
			wantCall:   "GET /v1/agent/members",
			deprecated: true,
		},
		{
			alias:      []string{"server-join", "10.0.0.2", "10.0.0.3:4648"},
			target:     []string{"server", "join", "10.0.0.2", "10.0.0.3:4648"},
			routes:     map[string]route{"PUT /v1/agent/join": jsonBody(`{"num_joined":2,"error":""}`)},
			wantCall:   "PUT /v1/agent/join",
			deprecated: true,
		},
		{
			alias:      []string{"server-force-leave", "-prune", "b.global"},
			target:     []string{"server", "force-leave", "-prune", "b.global"},
			routes:     map[string]route{"PUT /v1/agent/force-leave": jsonBody(`null`)},
			wantCall:   "PUT /v1/agent/force-leave",
			deprecated: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.alias[0], func(t *testing.T) {
			var targetCode, aliasCode int
			var targetOut, targetErr, aliasOut, aliasErr string
			targetAgent := newFakeAgent(t, tc.routes)
			targetStdout := captureStdout(t, func() {
				targetCode, targetOut, targetErr = runCLI(t, targetAgent.srv.URL, "", tc.target...)
			})
			aliasAgent := newFakeAgent(t, tc.routes)
			aliasStdout := captureStdout(t, func() {
				aliasCode, aliasOut, aliasErr = runCLI(t, aliasAgent.srv.URL, "", tc.alias...)
			})

			method, path, _ := strings.Cut(tc.wantCall, " ")
			must.SliceNotEmpty(t, aliasAgent.find(method, path), must.Sprintf("%s never called %s", tc.alias[0], tc.wantCall))
			must.Eq(t, targetAgent.requests(), aliasAgent.requests())
			must.Eq(t, targetCode, aliasCode)
			must.Eq(t, targetOut, aliasOut)
			must.Eq(t, targetStdout, aliasStdout)
			if tc.deprecated {
				warning := deprecationWarning(tc.alias[0], strings.Join(tc.target[:2], " ")) + "\n"
				must.Eq(t, warning+targetErr, aliasErr)
			} else {
				must.Eq(t, targetErr, aliasErr)
			}
		})
	}
}

// captureStdout returns what run wrote to the process's standard output, where the
// streaming commands (exec, fs, logs) write past the UI.
func captureStdout(t *testing.T, run func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	must.NoError(t, err)
	saved := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stdout = saved }()
	run()
	w.Close()
	return <-done
}

// "nomad init" writes the same example job as "nomad job init", with the same flags.
func TestLegacyAliases_Init(t *testing.T) {
	run := func(args ...string) (string, string) {
		dir := t.TempDir()
		t.Chdir(dir)
		code, out, errOut := runCLI(t, "http://127.0.0.1:1", "", args...)
		must.Eq(t, 0, code, must.Sprint(errOut))
		entries, err := os.ReadDir(dir)
		must.NoError(t, err)
		must.Len(t, 1, entries)
		written, err := os.ReadFile(filepath.Join(dir, entries[0].Name()))
		must.NoError(t, err)
		return entries[0].Name() + "\n" + out, string(written)
	}
	targetOut, targetFile := run("job", "init", "-short")
	aliasOut, aliasFile := run("init", "-short")
	must.Eq(t, targetOut, aliasOut)
	must.Eq(t, targetFile, aliasFile)
}

// The legacy names are the same commands under another name: help says so and shows the
// name typed.
func TestLegacyAliases_Help(t *testing.T) {
	cmds := Commands(cli.NewMockUi())
	for _, name := range []string{"exec", "logs", "client-config", "server-members"} {
		cmd, err := cmds[name]()
		must.NoError(t, err)
		help := cmd.Help()
		must.StrHasPrefix(t, "Usage: nomad "+name+" ", help)
		must.StrContains(t, help, `("nomad `+name+`" is the same as "nomad `)
	}
}

// Enterprise and Windows commands exist so that a script gets one sentence naming why they do
// not run here, exit 1, and no request.
func TestUnavailableFeatures(t *testing.T) {
	cases := []struct {
		args     []string
		sentence string
	}{
		{[]string{"quota", "apply", "spec.hcl"}, "Resource quotas are a Nomad Enterprise feature that this build does not have.\n"},
		{[]string{"quota"}, "Resource quotas are a Nomad Enterprise feature that this build does not have.\n"},
		{[]string{"sentinel", "list"}, "Sentinel policies are a Nomad Enterprise feature that this build does not have.\n"},
		{[]string{"license", "get"}, "Licenses are a Nomad Enterprise feature that this build does not have.\n"},
		{[]string{"recommendation", "dismiss", "abc"}, "Resource recommendations are a Nomad Enterprise feature that this build does not have.\n"},
		{[]string{"windows", "service", "install"}, "Running Nomad as a Windows service is a Windows feature that this build does not have.\n"},
		{[]string{"setup", "consul", "-y"}, "Consul and Vault integration is not built in this project, so \"nomad setup\" has nothing to configure.\n"},
		{[]string{"setup", "vault"}, "Consul and Vault integration is not built in this project, so \"nomad setup\" has nothing to configure.\n"},
		{[]string{"action", "-job", "web", "weather"}, "Job actions are not built in this project: the agent has no actions API to run them through.\n"},
		{[]string{"job", "action", "-job", "web", "weather"}, "Job actions are not built in this project: the agent has no actions API to run them through.\n"},
		{[]string{"volume", "create", "vol.hcl"}, volumeUnavailable.sentence + "\n"},
		{[]string{"volume", "snapshot", "list"}, volumeUnavailable.sentence + "\n"},
		{[]string{"volume", "detach", "vol", "node"}, volumeUnavailable.sentence + "\n"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fa := newFakeAgent(t, nil)
			code, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, 1, code)
			must.Eq(t, "", out)
			must.Eq(t, tc.sentence, errOut)
			must.SliceEmpty(t, fa.requests())
		})
	}
	// Every name of those features answers, so none falls through to "command not found".
	cmds := Commands(cli.NewMockUi())
	for _, f := range unavailableFeatures {
		for _, name := range f.commands {
			factory, ok := cmds[name]
			must.True(t, ok, must.Sprint(name))
			cmd, err := factory()
			must.NoError(t, err)
			must.StrContains(t, cmd.Help(), f.sentence)
		}
	}
}

// Every hidden name is a command (a typo would hide nothing and leave the real name listed),
// and the legacy names' modern forms stay listed.
func TestHiddenCommands(t *testing.T) {
	cmds := Commands(cli.NewMockUi())
	for _, name := range HiddenCommands {
		_, ok := cmds[name]
		must.True(t, ok, must.Sprintf("hidden %q is no command", name))
	}
	for _, listed := range []string{"exec", "alloc", "job", "node", "server", "scaling", "plugin"} {
		must.False(t, slices.Contains(HiddenCommands, listed), must.Sprint(listed))
	}
}

// upstreamCommandNames are the command names upstream's CLI answers to that issue #23 found
// missing here. Each must exist, so a script gets either the command or a sentence naming
// why it does not run, never "command not found".
var upstreamCommandNames = []string{
	"operator debug", "operator api", "operator client-state",
	"volume", "volume status", "volume create", "volume register", "volume deregister", "volume delete",
	"volume detach", "volume init", "volume snapshot create", "volume snapshot delete", "volume snapshot list",
	"action", "job action", "var init", "eval delete", "node pool init", "node pool jobs", "node pool nodes",
	"namespace inspect", "job scaling-events", "setup", "setup consul", "setup vault",
}

func TestUpstreamCommandNames(t *testing.T) {
	cmds := Commands(cli.NewMockUi())
	for _, name := range upstreamCommandNames {
		factory, ok := cmds[name]
		must.True(t, ok, must.Sprintf("no command %q", name))
		cmd, err := factory()
		must.NoError(t, err)
		must.StrHasPrefix(t, "Usage: nomad "+name, cmd.Help(), must.Sprint(name))
		must.NotEq(t, "", cmd.Synopsis(), must.Sprint(name))
	}
}

// TestAliases_FreshCommandEachUse: a declared command keeps its flag values in its
// constructor's variables, so an alias must build the target anew for every use, as the
// target's own name does.
func TestAliases_FreshCommandEachUse(t *testing.T) {
	cmds := Commands(cli.NewMockUi())
	for _, name := range []string{"stop", "node-drain", "client-config"} {
		first, err := cmds[name]()
		must.NoError(t, err)
		second, err := cmds[name]()
		must.NoError(t, err)
		target := func(c cli.Command) cli.Command {
			if d, ok := c.(*deprecatedAliasCommand); ok {
				return d.Command
			}
			return c.(*aliasCommand).Command
		}
		must.True(t, target(first) != target(second), must.Sprint(name))
	}
}
