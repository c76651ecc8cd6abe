package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// matrixClientAllocEndpoints are the ACL matrix rows of the routes served by the agent's
// client. The matrix agent runs no client and the allocation does not exist, so whoever may
// exec in the namespace (alloc-exec or alloc-node-exec), or read its logs (read-logs or
// read-fs), learns that (404) and everyone else is refused.
func matrixClientAllocEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{
			name: "alloc exec", method: "GET",
			path:  "/v1/client/allocation/no-such-alloc/exec?task=web&command=" + url.QueryEscape(`["/bin/true"]`),
			allow: []string{rowWrite, rowManagement}, okStatus: 404,
		},
		{
			name: "alloc logs", method: "GET", path: "/v1/client/fs/logs/no-such-alloc?task=web&type=stdout",
			allow: []string{rowWrite, rowManagement}, okStatus: 404,
		},
	}
}

func TestACLMatrix_ClientAllocs(t *testing.T) {
	runACLMatrix(t, matrixClientAllocEndpoints(), matrixRows)
}

// runningAlloc registers job and returns its one allocation once it runs.
func runningAlloc(t *testing.T, c *api.Client, job *api.Job) *api.Allocation {
	t.Helper()
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	stubs := allocsIn(t, c, *job.ID, map[string]int{"running": 1})
	alloc, _, err := c.Allocations().Info(stubs[0].ID, nil)
	must.NoError(t, err)
	return alloc
}

// execResult is what one exec through the official client gave.
type execResult struct {
	code           int
	err            error
	stdout, stderr string
}

// execOfficial runs command in task through the official client's Allocations().Exec, with
// stdin as input.
func execOfficial(t *testing.T, c *api.Client, alloc *api.Allocation, task string, tty bool, stdin string, command ...string) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code, err := c.Allocations().Exec(ctx, alloc, task, tty, command, strings.NewReader(stdin), &stdout, &stderr, nil, nil)
	return execResult{code: code, err: err, stdout: stdout.String(), stderr: stderr.String()}
}

// execStatus is the HTTP status and body of a GET of the exec route that is not upgraded.
func execStatus(t *testing.T, ta *TestAgent, allocID, query, token string) (int, string) {
	t.Helper()
	header := http.Header{}
	if token != "" {
		header.Set("X-Nomad-Token", token)
	}
	res := doHTTP(t, ta, "GET", "/v1/client/allocation/"+allocID+"/exec?"+query, nil, header)
	return res.status, res.body
}

func execQuery(task string, command ...string) string {
	raw, _ := json.Marshal(command)
	return url.Values{"task": {task}, "command": {string(raw)}}.Encode()
}

func TestClientAllocExec_OfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	alloc := runningAlloc(t, c, testJob("web"))

	t.Run("streams and exit code", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "sleep", false, "", "/bin/sh", "-c", "echo hi; echo err >&2; exit 3")
		must.NoError(t, res.err)
		must.Eq(t, 3, res.code)
		must.Eq(t, "hi\n", res.stdout)
		must.Eq(t, "err\n", res.stderr)
	})
	t.Run("stdin until closed", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "sleep", false, "one\ntwo\n", "cat")
		must.NoError(t, res.err)
		must.Eq(t, 0, res.code)
		must.Eq(t, "one\ntwo\n", res.stdout)
	})
	t.Run("large output arrives whole", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "sleep", false, "", "/bin/sh", "-c", "head -c 300000 /dev/zero")
		must.NoError(t, res.err)
		must.Eq(t, 300000, len(res.stdout))
	})
	t.Run("task directory and environment", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "sleep", false, "", "/bin/sh", "-c", `pwd; echo "$NOMAD_TASK_NAME $NOMAD_ALLOC_ID"`)
		must.NoError(t, res.err)
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		must.SliceLen(t, 2, lines)
		must.StrHasSuffix(t, "/"+alloc.ID+"/sleep", lines[0])
		must.Eq(t, "sleep "+alloc.ID, lines[1])
	})
	t.Run("a killed command reports 128 plus the signal", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "sleep", false, "", "/bin/sh", "-c", "kill -TERM $$")
		must.NoError(t, res.err)
		must.Eq(t, 128+15, res.code)
	})
	t.Run("a program that does not exist", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "sleep", false, "", "/no/such/program")
		must.ErrorContains(t, res.err, "no such file or directory")
	})
	t.Run("tty", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "sleep", true, "", "/bin/sh", "-c", "tty; exit 6")
		must.NoError(t, res.err)
		must.Eq(t, 6, res.code)
		must.StrContains(t, res.stdout, "/dev/pts/")
	})
	t.Run("unknown task", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "nope", false, "", "/bin/true")
		status, body := responseError(t, res.err)
		must.Eq(t, 404, status)
		must.Eq(t, `task "nope" not found in allocation `+alloc.ID, body)
	})
	t.Run("the caller leaving kills the command", func(t *testing.T) {
		pid, done, cancel := startLongExec(t, c, alloc)
		cancel()
		waitExecError(t, done)
		processGone(t, pid)
	})
}

func TestClientAllocExec_BadRequests(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	alloc := runningAlloc(t, ta.Client(""), testJob("web"))
	cases := []struct {
		name    string
		allocID string
		query   string
		status  int
		body    string
	}{
		{name: "missing task", allocID: alloc.ID, query: "command=" + url.QueryEscape(`["ls"]`), status: 400,
			body: "missing task: the task parameter names the task to run the command in"},
		{name: "missing command", allocID: alloc.ID, query: "task=sleep", status: 400,
			body: "missing command: the command parameter is a JSON array of strings"},
		{name: "command not JSON", allocID: alloc.ID, query: "task=sleep&command=ls", status: 400,
			body: "invalid command: not a JSON array of strings: invalid character 'l' looking for beginning of value"},
		{name: "command not an array of strings", allocID: alloc.ID, query: "task=sleep&command=" + url.QueryEscape(`[1]`), status: 400,
			body: "invalid command: not a JSON array of strings: json: cannot unmarshal number into Go value of type string"},
		{name: "empty command", allocID: alloc.ID, query: "task=sleep&command=" + url.QueryEscape(`[]`), status: 400,
			body: "invalid command: the array is empty or names no program"},
		{name: "bad tty", allocID: alloc.ID, query: execQuery("sleep", "ls") + "&tty=maybe", status: 400,
			body: `Failed to parse value of "tty" (maybe) as a bool: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{name: "unknown allocation", allocID: "8b1c1f5e-0000-4000-8000-000000000000", query: execQuery("sleep", "ls"), status: 404,
			body: `Unknown allocation "8b1c1f5e-0000-4000-8000-000000000000"`},
		// Every check passed, but the request is not a WebSocket upgrade.
		{name: "not a websocket", allocID: alloc.ID, query: execQuery("sleep", "ls"), status: 400,
			body: "Bad Request\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := execStatus(t, ta, tc.allocID, tc.query, "")
			must.Eq(t, tc.status, status)
			must.Eq(t, tc.body, body)
		})
	}
	t.Run("wrong verb", func(t *testing.T) {
		res := doHTTP(t, ta, "POST", "/v1/client/allocation/"+alloc.ID+"/exec?"+execQuery("sleep", "ls"), nil, nil)
		must.Eq(t, 405, res.status)
	})
}

func TestClientAllocExec_TaskNotRunning(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := api.NewBatchJob("done", "done", "global", 50)
	job.Datacenters = []string{"dc1"}
	job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(api.NewTask("t", "mock_driver").SetConfig("run_for", "0s")))
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	stubs := allocsIn(t, c, "done", map[string]int{"complete": 1})

	status, body := execStatus(t, ta, stubs[0].ID, execQuery("t", "ls"), "")
	must.Eq(t, 400, status)
	must.StrContains(t, body, "not running")
}

func TestClientAllocExec_DisableRemoteExec(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) { c.Client.DisableRemoteExec = true })
	c := ta.Client("")
	alloc := runningAlloc(t, c, testJob("web"))
	res := execOfficial(t, c, alloc, "sleep", false, "", "/bin/true")
	status, body := responseError(t, res.err)
	must.Eq(t, 403, status)
	must.Eq(t, "Permission denied: remote exec is disabled on this node (client disable_remote_exec)", body)
}

// newTestACLClientAgent is NewTestClientAgent with ACLs on; it returns a management secret.
func newTestACLClientAgent(t *testing.T) (*TestAgent, string) {
	t.Helper()
	ta := NewTestClientAgent(t, func(c *Config) { c.ACL.Enabled = true })
	var reply structs.ACLTokenUpsertResponse
	must.NoError(t, ta.Server().Endpoints.ACL.Bootstrap(&nomad.BootstrapRequest{}, &reply))
	return ta, reply.Tokens[0].SecretID
}

// TestClientAllocExec_ACL checks upstream's rule: alloc-exec for a task of a driver with
// filesystem isolation, alloc-node-exec instead for one without (raw_exec).
func TestClientAllocExec_ACL(t *testing.T) {
	ta, root := newTestACLClientAgent(t)
	mgmt := ta.Client(root)
	rawAlloc := runningAlloc(t, mgmt, testJob("web"))
	mockJob := api.NewServiceJob("iso", "iso", "global", 50)
	mockJob.Datacenters = []string{"dc1"}
	mockJob.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(api.NewTask("t", "mock_driver").SetConfig("run_for", "10m")))
	mockAlloc := runningAlloc(t, mgmt, mockJob)

	mustUpsertPolicy(t, mgmt, "exec", `namespace "default" { capabilities = ["alloc-exec"] }`)
	mustUpsertPolicy(t, mgmt, "node-exec", `namespace "default" { capabilities = ["alloc-node-exec"] }`)
	mustUpsertPolicy(t, mgmt, "write", `namespace "default" { policy = "write" }`)
	mustUpsertPolicy(t, mgmt, "other", `namespace "other" { capabilities = ["alloc-exec", "alloc-node-exec"] }`)
	secrets := map[string]string{"none": "", "management": root}
	for _, p := range []string{"exec", "node-exec", "write", "other"} {
		secrets[p] = mustCreateToken(t, mgmt, p, p).SecretID
	}

	const (
		nodeExecDenied = `Permission denied: alloc-node-exec capability required in namespace "default"`
		execDenied     = `Permission denied: alloc-exec capability required in namespace "default"`
	)
	cases := []struct {
		name   string
		token  string
		alloc  *api.Allocation
		task   string
		denied string // the 403 body; "" when allowed
	}{
		{name: "raw_exec without a token", token: "none", alloc: rawAlloc, task: "sleep", denied: nodeExecDenied},
		{name: "raw_exec with alloc-exec only", token: "exec", alloc: rawAlloc, task: "sleep", denied: nodeExecDenied},
		{name: "raw_exec with write (no alloc-node-exec)", token: "write", alloc: rawAlloc, task: "sleep", denied: nodeExecDenied},
		{name: "raw_exec with alloc-node-exec", token: "node-exec", alloc: rawAlloc, task: "sleep"},
		{name: "raw_exec with management", token: "management", alloc: rawAlloc, task: "sleep"},
		{name: "raw_exec from another namespace", token: "other", alloc: rawAlloc, task: "sleep", denied: nodeExecDenied},
		{name: "isolated with alloc-exec", token: "exec", alloc: mockAlloc, task: "t"},
		{name: "isolated with write", token: "write", alloc: mockAlloc, task: "t"},
		{name: "isolated with alloc-node-exec only", token: "node-exec", alloc: mockAlloc, task: "t", denied: execDenied},
		{name: "isolated without a token", token: "none", alloc: mockAlloc, task: "t", denied: execDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ta.Client(secrets[tc.token])
			res := execOfficial(t, c, tc.alloc, tc.task, false, "in\n", "cat")
			if tc.denied != "" {
				status, body := responseError(t, res.err)
				must.Eq(t, 403, status)
				must.Eq(t, tc.denied, body)
				return
			}
			must.NoError(t, res.err)
			must.Eq(t, 0, res.code)
			must.StrHasSuffix(t, "in\n", res.stdout)
		})
	}

	t.Run("unknown allocation", func(t *testing.T) {
		missing := "8b1c1f5e-0000-4000-8000-000000000000"
		status, body := execStatus(t, ta, missing, execQuery("sleep", "ls"), "")
		must.Eq(t, 403, status, must.Sprint("without rights the ID's existence is not told"))
		must.Eq(t, execDenied, body)
		status, body = execStatus(t, ta, missing, execQuery("sleep", "ls"), secrets["node-exec"])
		must.Eq(t, 404, status)
		must.Eq(t, `Unknown allocation "`+missing+`"`, body)
		// Through the official client (a WebSocket): upstream's words as the error.
		stub := &api.Allocation{ID: missing, NodeID: "8b1c1f5e-0000-4000-8000-0000000000ff", Namespace: "default"}
		code, err := ta.Client(secrets["node-exec"]).Allocations().Exec(context.Background(), stub, "sleep", false,
			[]string{"ls"}, strings.NewReader(""), io.Discard, io.Discard, nil, nil)
		must.Eq(t, -2, code)
		must.EqError(t, err, `Unknown allocation "`+missing+`"`)
	})
	t.Run("an unknown token", func(t *testing.T) {
		status, body := execStatus(t, ta, rawAlloc.ID, execQuery("sleep", "ls"), "8b1c1f5e-0000-4000-8000-000000000001")
		must.Eq(t, 403, status)
		must.Eq(t, "Permission denied: ACL token not found", body)
	})
	t.Run("an unknown task is told only to who may exec", func(t *testing.T) {
		status, body := execStatus(t, ta, rawAlloc.ID, execQuery("nope", "ls"), secrets["exec"])
		must.Eq(t, 403, status)
		must.Eq(t, nodeExecDenied, body)
		status, _ = execStatus(t, ta, rawAlloc.ID, execQuery("nope", "ls"), root)
		must.Eq(t, 404, status)
	})

	t.Run("ws_handshake", func(t *testing.T) {
		cases := []struct {
			name      string
			handshake string
			header    string
			wantCode  int    // close code when refused
			wantText  string // close reason when refused
		}{
			{name: "token in the frame", handshake: `{"version":1,"auth_token":"` + secrets["node-exec"] + `"}`},
			{name: "frame token wins over the header", handshake: `{"version":1,"auth_token":"` + secrets["node-exec"] + `"}`, header: secrets["exec"]},
			{name: "header token with an empty frame token", handshake: `{"version":1,"auth_token":""}`, header: root},
			{name: "token without the capability", handshake: `{"version":1,"auth_token":"` + secrets["exec"] + `"}`,
				wantCode: websocket.ClosePolicyViolation, wantText: nodeExecDenied},
			{name: "no token", handshake: `{"version":1}`,
				wantCode: websocket.ClosePolicyViolation, wantText: nodeExecDenied},
			{name: "unknown version", handshake: `{"version":2,"auth_token":"` + root + `"}`,
				wantCode: websocket.ClosePolicyViolation, wantText: "unsupported handshake version 2"},
			{name: "not JSON", handshake: `hello`,
				wantCode: websocket.ClosePolicyViolation, wantText: "invalid handshake frame: invalid character 'h' looking for beginning of value"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				conn := dialExec(t, ta, rawAlloc.ID, execQuery("sleep", "/bin/sh", "-c", "cat; exit 7")+"&ws_handshake=true", tc.header)
				must.NoError(t, conn.WriteMessage(websocket.TextMessage, []byte(tc.handshake)))
				// A refused session may already be closed by the server, so the stdin writes
				// only have to succeed when the handshake is accepted.
				errData := conn.WriteJSON(&api.ExecStreamingInput{Stdin: &api.ExecStreamingIOOperation{Data: []byte("x")}})
				errClose := conn.WriteJSON(&api.ExecStreamingInput{Stdin: &api.ExecStreamingIOOperation{Close: true}})
				if tc.wantCode == 0 {
					must.NoError(t, errData)
					must.NoError(t, errClose)
				}
				frames, closeErr := readExecFrames(t, conn)
				if tc.wantCode != 0 {
					must.NotNil(t, closeErr)
					must.Eq(t, tc.wantCode, closeErr.Code)
					must.Eq(t, tc.wantText, closeErr.Text)
					return
				}
				must.NotNil(t, closeErr)
				must.Eq(t, websocket.CloseNormalClosure, closeErr.Code)
				must.Eq(t, []string{
					`{"stdout":{"data":"eA=="}}`,
					`{"stdout":{"close":true}}`,
					`{"stderr":{"close":true}}`,
					`{"exited":true,"result":{"exit_code":7}}`,
				}, frames)
			})
		}
	})
}

// dialExec opens the exec WebSocket itself, for what the official client does not do (the
// handshake frame) and to see the frames and close codes as sent.
func dialExec(t *testing.T, ta *TestAgent, allocID, query, token string) *websocket.Conn {
	t.Helper()
	header := http.Header{}
	if token != "" {
		header.Set("X-Nomad-Token", token)
	}
	u := "ws://" + ta.Agent.HTTPAddr() + "/v1/client/allocation/" + allocID + "/exec?" + query
	conn, resp, err := websocket.DefaultDialer.Dial(u, header)
	must.NoError(t, err)
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readExecFrames reads frames until the server closes the connection, and returns them as
// sent with the close frame.
func readExecFrames(t *testing.T, conn *websocket.Conn) ([]string, *websocket.CloseError) {
	t.Helper()
	must.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	var frames []string
	for {
		_, raw, err := conn.ReadMessage()
		if err != nil {
			closeErr, ok := err.(*websocket.CloseError)
			must.True(t, ok, must.Sprintf("connection ended without a close frame: %v", err))
			return frames, closeErr
		}
		frames = append(frames, string(raw))
	}
}

// lineWriter delivers the first line written to it.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
	sent  bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent {
		if line, err := bufio.NewReader(bytes.NewReader(w.buf.Bytes())).ReadString('\n'); err == nil {
			w.sent = true
			w.lines <- line
		}
	}
	return len(p), nil
}

// blockingReader is a stdin that never ends until ctx does.
type blockingReader struct{ ctx context.Context }

func (r blockingReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, io.EOF
}

// startLongExec runs a command that prints its pid and then sleeps, through the official
// client; it returns the pid, where the exec's error will arrive, and how to leave.
func startLongExec(t *testing.T, c *api.Client, alloc *api.Allocation) (int, <-chan error, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pidLine := &lineWriter{lines: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		_, err := c.Allocations().Exec(ctx, alloc, "sleep", false,
			[]string{"/bin/sh", "-c", "echo $$; exec sleep 300"}, blockingReader{ctx}, pidLine, io.Discard, nil, nil)
		done <- err
	}()
	select {
	case line := <-pidLine.lines:
		pid, err := strconv.Atoi(strings.TrimSpace(line))
		must.NoError(t, err)
		running(t, pid)
		return pid, done, cancel
	case <-time.After(10 * time.Second):
		t.Fatal("the command never printed its pid")
	}
	return 0, nil, nil
}

func waitExecError(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("the exec session did not end")
	}
	return nil
}

// TestClientAllocExec_EndsWithTheTask: stopping the task ends the session with an error and
// kills the command.
func TestClientAllocExec_EndsWithTheTask(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	alloc := runningAlloc(t, c, testJob("web"))
	pid, done, _ := startLongExec(t, c, alloc)

	_, _, err := c.Jobs().Deregister("web", false, nil)
	must.NoError(t, err)
	must.ErrorContains(t, waitExecError(t, done), `task "sleep" stopped while the command ran`)
	processGone(t, pid)
}

// TestClientAllocExec_AgentShutdown: an agent that stops ends its exec sessions (the HTTP
// server does not wait for hijacked connections) and kills their commands.
func TestClientAllocExec_AgentShutdown(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	alloc := runningAlloc(t, c, testJob("web"))
	pid, done, _ := startLongExec(t, c, alloc)

	ta.Agent.Shutdown()
	must.Error(t, waitExecError(t, done))
	processGone(t, pid)
}
