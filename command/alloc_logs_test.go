package command

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// fakeLogs serves a stdout log of three lines and a stderr log of one, applying origin and
// offset, in two frames; a followed log gains one more line.
func fakeLogs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	log := map[string]string{"stdout": "l1\nl2\nl3\n", "stderr": "e1\n"}[q.Get("type")]
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = min(offset, len(log))
	if q.Get("origin") == "end" {
		log = log[len(log)-offset:]
	} else {
		log = log[offset:]
	}
	if q.Get("follow") == "true" {
		log += "followed\n"
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	half := len(log) / 2
	_ = enc.Encode(&api.StreamFrame{Data: []byte(log[:half]), File: "alloc/logs/sleep." + q.Get("type") + ".0"})
	_ = enc.Encode(&api.StreamFrame{}) // a heartbeat
	_ = enc.Encode(&api.StreamFrame{Data: []byte(log[half:]), File: "alloc/logs/sleep." + q.Get("type") + ".0"})
}

func TestAllocLogs(t *testing.T) {
	logsPath := "/v1/client/fs/logs/" + execAllocID
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
		// queries are the logs requests the command must make, in order.
		queries []map[string]string
	}{
		{
			name: "stdout of the only task", args: []string{"5a7c"}, stdout: "l1\nl2\nl3\n",
			queries: []map[string]string{{"task": "sleep", "type": "stdout", "origin": "start", "offset": "0", "follow": "false", "namespace": "prod"}},
		},
		{
			name: "stderr of a named task", args: []string{"-stderr", "5a7c", "sleep"}, stdout: "e1\n",
			queries: []map[string]string{{"task": "sleep", "type": "stderr"}},
		},
		{
			name: "tail bytes", args: []string{"-tail", "-c", "3", "5a7c"}, stdout: "l3\n",
			queries: []map[string]string{{"origin": "end", "offset": "3"}},
		},
		{
			name: "tail lines", args: []string{"-tail", "-n", "2", "5a7c"}, stdout: "l2\nl3\n",
			queries: []map[string]string{{"origin": "start", "offset": "0", "follow": "false"}},
		},
		{
			name: "tail lines then follow", args: []string{"-tail", "-n", "1", "-f", "5a7c"}, stdout: "l3\nfollowed\n",
			queries: []map[string]string{
				{"origin": "start", "offset": "0", "follow": "false"},
				{"origin": "start", "offset": "9", "follow": "true"},
			},
		},
		{
			name: "follow", args: []string{"-f", "-task=sleep", "5a7c"}, stdout: "l1\nl2\nl3\nfollowed\n",
			queries: []map[string]string{{"follow": "true"}},
		},
		{name: "no arguments", code: 1, stderr: "This command takes one or two arguments: <allocation> [<task>]\n"},
		{name: "-n without -tail", args: []string{"-n", "3", "5a7c"}, code: 1, stderr: "-n and -c need -tail\n"},
		{name: "-n and -c", args: []string{"-tail", "-n", "3", "-c", "4", "5a7c"}, code: 1, stderr: "-n and -c cannot be used together\n"},
		{name: "task named twice", args: []string{"-task", "a", "5a7c", "b"}, code: 1, stderr: "The task is named twice: -task=a and b\n"},
		{name: "unknown task", args: []string{"5a7c", "nope"}, code: 1, stderr: "Task \"nope\" is not in allocation 5a7c0e36; its tasks: sleep\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
				"GET /v1/allocation/" + execAllocID: jsonBody(execAllocJSON),
				"GET " + logsPath:                   fakeLogs,
			})
			ui := cli.NewMockUi()
			var stdout bytes.Buffer
			cmd := &AllocLogsCommand{Meta: Meta{Ui: ui}, Stdout: &stdout}
			code := cmd.Run(append([]string{"-address=" + fa.srv.URL}, tc.args...))
			must.Eq(t, tc.code, code, must.Sprint(ui.ErrorWriter.String()))
			must.Eq(t, tc.stdout, stdout.String())
			must.Eq(t, tc.stderr, ui.ErrorWriter.String())
			reqs := fa.find("GET", logsPath)
			must.SliceLen(t, len(tc.queries), reqs)
			for i, want := range tc.queries {
				for k, v := range want {
					must.Eq(t, v, strings.Join(reqs[i].Query[k], ","), must.Sprintf("request %d, %s", i, k))
				}
			}
		})
	}
}

func TestAllocLogs_Refused(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
		"GET /v1/allocation/" + execAllocID: jsonBody(execAllocJSON),
		"GET /v1/client/fs/logs/" + execAllocID: textError(403,
			`Permission denied: read-logs capability required in namespace "prod"`),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "alloc", "logs", "5a7c")
	must.Eq(t, 1, code)
	must.Eq(t, "", out)
	must.Eq(t, "Error reading the stdout log of task \"sleep\": Unexpected response code: 403 "+
		"(Permission denied: read-logs capability required in namespace \"prod\")\n", errOut)
}

func TestLastLines(t *testing.T) {
	cases := []struct {
		name   string
		n      int
		writes []string
		want   string
	}{
		{name: "fewer lines than asked", n: 5, writes: []string{"a\nb\n"}, want: "a\nb\n"},
		{name: "across writes", n: 2, writes: []string{"a\nb", "\nc\n", "d\n"}, want: "c\nd\n"},
		{name: "a last line without newline counts", n: 2, writes: []string{"a\nb\nc"}, want: "b\nc"},
		{name: "zero", n: 0, writes: []string{"a\n"}, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &lastLines{n: tc.n}
			for _, w := range tc.writes {
				_, _ = l.Write([]byte(w))
			}
			must.Eq(t, tc.want, string(l.buf))
		})
	}
}
