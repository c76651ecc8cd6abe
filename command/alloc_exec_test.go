package command

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const (
	execAllocID   = "5a7c0e36-1111-4222-8333-444455556666"
	execAllocID2  = "5a7c9999-1111-4222-8333-444455556666"
	execAllocJSON = `{"ID":"` + execAllocID + `","Namespace":"prod","NodeID":"n1","TaskGroup":"web",` +
		`"ClientStatus":"running","DesiredStatus":"run",` +
		`"Job":{"ID":"web","TaskGroups":[{"Name":"web","Tasks":[{"Name":"sleep"}]},{"Name":"other","Tasks":[{"Name":"a"},{"Name":"b"}]}]}}`
)

// fakeExec is the agent's side of an exec session: it takes stdin until it is closed, then
// answers the command line and the input on stdout, "err" on stderr, and exit code 3.
func fakeExec(t *testing.T) route {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer conn.Close()
		var command []string
		must.NoError(t, json.Unmarshal([]byte(r.URL.Query().Get("command")), &command))
		var stdin bytes.Buffer
		for {
			var in api.ExecStreamingInput
			if err := conn.ReadJSON(&in); err != nil {
				return
			}
			if in.Stdin == nil {
				continue
			}
			stdin.Write(in.Stdin.Data)
			if in.Stdin.Close {
				break
			}
		}
		line := r.URL.Query().Get("task") + ": " + strings.Join(command, "|") + "\n"
		for _, frame := range []api.ExecStreamingOutput{
			{Stdout: &api.ExecStreamingIOOperation{Data: []byte(line)}},
			{Stdout: &api.ExecStreamingIOOperation{Data: stdin.Bytes()}},
			{Stderr: &api.ExecStreamingIOOperation{Data: []byte("err\n")}},
			{Exited: true, Result: &api.ExecStreamingExitResult{ExitCode: 3}},
		} {
			must.NoError(t, conn.WriteJSON(frame))
		}
	}
}

func TestAllocExec(t *testing.T) {
	prefixOne := jsonBody(`[{"ID":"` + execAllocID + `"}]`)
	routes := func(extra map[string]route) map[string]route {
		out := map[string]route{
			"GET /v1/allocations":                                prefixOne,
			"GET /v1/allocation/" + execAllocID:                  jsonBody(execAllocJSON),
			"GET /v1/client/allocation/" + execAllocID + "/exec": fakeExec(t),
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name   string
		routes map[string]route
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
		// query is what the exec request must have carried.
		query map[string]string
	}{
		{
			name:  "everything after the allocation is the command",
			stdin: "input\n",
			args:  []string{"-task", "sleep", "5a7c0e", "/bin/sh", "-c", "exit 3", "-i=false"},
			code:  3, stdout: "sleep: /bin/sh|-c|exit 3|-i=false\ninput\n", stderr: "err\n",
			query: map[string]string{"task": "sleep", "tty": "false", "namespace": "prod", "command": `["/bin/sh","-c","exit 3","-i=false"]`},
		},
		{
			name:  "the only task is taken",
			stdin: "x",
			args:  []string{execAllocID, "ls"},
			code:  3, stdout: "sleep: ls\nx", stderr: "err\n",
		},
		{
			name:  "no input with -i=false",
			stdin: "ignored",
			args:  []string{"-i=false", "5a7c", "cat"},
			code:  3, stdout: "sleep: cat\n", stderr: "err\n",
		},
		{
			name: "-job picks a running allocation",
			routes: map[string]route{"GET /v1/job/web/allocations": jsonBody(`[` +
				`{"ID":"` + execAllocID2 + `","ClientStatus":"complete","DesiredStatus":"stop"},` +
				`{"ID":"` + execAllocID + `","ClientStatus":"running","DesiredStatus":"run"}]`)},
			args: []string{"-job", "web", "ls"},
			code: 3, stdout: "sleep: ls\n", stderr: "err\n",
		},
		{
			name:   "-job without running allocations",
			routes: map[string]route{"GET /v1/job/web/allocations": jsonBody(`[]`)},
			args:   []string{"-job", "web", "ls"},
			code:   1, stderr: "Job \"web\" has no running allocations\n",
		},
		{
			name:   "too few arguments",
			args:   []string{"5a7c"},
			code:   1,
			stderr: "This command takes at least two arguments: <allocation> <command> [<args>...]\n",
		},
		{
			name:   "prefix too short",
			args:   []string{"5", "ls"},
			code:   1,
			stderr: "Allocation ID must have at least two characters\n",
		},
		{
			name:   "no such allocation",
			routes: map[string]route{"GET /v1/allocations": jsonBody(`[]`)},
			args:   []string{"ffff", "ls"},
			code:   1,
			stderr: "No allocation(s) with prefix or ID \"ffff\" found\n",
		},
		{
			name: "ambiguous prefix",
			routes: map[string]route{"GET /v1/allocations": jsonBody(
				`[{"ID":"` + execAllocID2 + `"},{"ID":"` + execAllocID + `"}]`)},
			args:   []string{"5a7c", "ls"},
			code:   1,
			stderr: "Prefix \"5a7c\" matched multiple allocations: [" + execAllocID + " " + execAllocID2 + "]\n",
		},
		{
			name:   "unknown task",
			args:   []string{"-task", "nope", "5a7c", "ls"},
			code:   1,
			stderr: "Task \"nope\" is not in allocation 5a7c0e36; its tasks: sleep\n",
		},
		{
			name: "several tasks and no -task",
			routes: map[string]route{"GET /v1/allocation/" + execAllocID: jsonBody(
				strings.Replace(execAllocJSON, `"TaskGroup":"web"`, `"TaskGroup":"other"`, 1))},
			args:   []string{"5a7c", "ls"},
			code:   1,
			stderr: "Allocation 5a7c0e36 has several tasks, pick one with -task: a, b\n",
		},
		{
			name: "finished allocation",
			routes: map[string]route{"GET /v1/allocation/" + execAllocID: jsonBody(
				strings.Replace(execAllocJSON, `"ClientStatus":"running"`, `"ClientStatus":"complete"`, 1))},
			args:   []string{"5a7c", "ls"},
			code:   1,
			stderr: "Allocation 5a7c0e36 is complete: commands run only in running allocations\n",
		},
		{
			name: "refused by the agent",
			routes: map[string]route{"GET /v1/client/allocation/" + execAllocID + "/exec": textError(403,
				`Permission denied: alloc-node-exec capability required in namespace "prod"`)},
			args: []string{"5a7c", "ls"},
			code: 1,
			stderr: "Failed to exec into task \"sleep\": Unexpected response code: 403 " +
				"(Permission denied: alloc-node-exec capability required in namespace \"prod\")\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, routes(tc.routes))
			ui := cli.NewMockUi()
			var stdout, stderr bytes.Buffer
			cmd := &AllocExecCommand{Meta: Meta{Ui: ui}, Stdin: strings.NewReader(tc.stdin), Stdout: &stdout, Stderr: &stderr}
			code := cmd.Run(append([]string{"-address=" + fa.srv.URL}, tc.args...))
			must.Eq(t, tc.code, code, must.Sprint(ui.ErrorWriter.String()))
			must.Eq(t, tc.stdout, stdout.String())
			must.Eq(t, tc.stderr, stderr.String()+ui.ErrorWriter.String())
			if tc.query != nil {
				reqs := fa.find("GET", "/v1/client/allocation/"+execAllocID+"/exec")
				must.SliceLen(t, 1, reqs)
				for k, v := range tc.query {
					must.Eq(t, v, strings.Join(reqs[0].Query[k], ","), must.Sprint(k))
				}
			}
		})
	}
}

func TestAllocExec_Help(t *testing.T) {
	ui := cli.NewMockUi()
	cmd := &AllocExecCommand{Meta: Meta{Ui: ui}}
	must.Eq(t, cli.RunResultHelp, cmd.Run([]string{"-h"}))
	must.Eq(t, 1, cmd.Run([]string{"-bogus", "a", "ls"}))
	must.StrContains(t, ui.ErrorWriter.String(), "Error parsing flags: flag provided but not defined: -bogus")
}
