package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// fsScript writes a file, a secret, and links out of the allocation directory, then waits.
const fsScript = `printf 'hello world\n' > "$NOMAD_TASK_DIR/hello.txt"; ` +
	`printf s3cret-token > "$NOMAD_SECRETS_DIR/token"; ` +
	`ln -s /etc/passwd "$NOMAD_TASK_DIR/passwd"; ` +
	`ln -s ../secrets/token "$NOMAD_TASK_DIR/token"; ` +
	`echo ready; exec sleep 600`

func fsPath(op, allocID string, params url.Values) string {
	return "/v1/client/fs/" + op + "/" + allocID + "?" + params.Encode()
}

// fsReadyAlloc runs fsScript and waits until it wrote its files.
func fsReadyAlloc(t *testing.T, ta *TestAgent, c *api.Client, token string) *api.Allocation {
	t.Helper()
	alloc := runningAlloc(t, c, shJob("files", "service", fsScript))
	header := http.Header{}
	if token != "" {
		header.Set("X-Nomad-Token", token)
	}
	eventually(t, 10*time.Second, "the task's files", func() (bool, string) {
		res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}, "plain": {"true"}}), nil, header)
		return res.body == "ready\n", res.body
	})
	return alloc
}

// streamFrames reads frames of a stream through the official client until want bytes of
// data came, returning the frames.
func streamFrames(t *testing.T, c *api.Client, alloc *api.Allocation, path, origin string, offset int64, want int) []*api.StreamFrame {
	t.Helper()
	cancel := make(chan struct{})
	defer close(cancel)
	frames, errCh := c.AllocFS().Stream(alloc, path, origin, offset, cancel, nil)
	var out []*api.StreamFrame
	got := 0
	timeout := time.After(20 * time.Second)
	for got < want {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatalf("the stream ended after %d bytes", got)
			}
			out = append(out, f)
			got += len(f.Data)
		case err := <-errCh:
			t.Fatalf("stream: %v", err)
		case <-timeout:
			t.Fatalf("the stream sent %d bytes of %d", got, want)
		}
	}
	return out
}

func TestAllocFS_Endpoints(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	alloc := fsReadyAlloc(t, ta, c, "")

	t.Run("list", func(t *testing.T) {
		files, _, err := c.AllocFS().List(alloc, "/", nil)
		must.NoError(t, err)
		var names []string
		for _, f := range files {
			names = append(names, f.Name)
		}
		must.Eq(t, []string{"alloc", "sh"}, names)
		must.True(t, files[0].IsDir)
		must.StrHasPrefix(t, "d", files[0].FileMode)
		must.False(t, files[0].ModTime.IsZero())

		files, _, err = c.AllocFS().List(alloc, "sh/local", nil)
		must.NoError(t, err)
		names = nil
		for _, f := range files {
			names = append(names, f.Name)
		}
		must.SliceContainsAll(t, []string{"hello.txt", "passwd", "token"}, names)
	})
	t.Run("stat", func(t *testing.T) {
		st, _, err := c.AllocFS().Stat(alloc, "sh/local/hello.txt", nil)
		must.NoError(t, err)
		must.Eq(t, "hello.txt", st.Name)
		must.Eq(t, int64(12), st.Size)
		must.False(t, st.IsDir)
		must.StrHasPrefix(t, "text/plain", st.ContentType)
		// The wire names are upstream's.
		res := doHTTP(t, ta, "GET", fsPath("stat", alloc.ID, url.Values{"path": {"sh/local/hello.txt"}}), nil, nil)
		must.Eq(t, 200, res.status)
		var raw map[string]any
		must.NoError(t, json.Unmarshal([]byte(res.body), &raw))
		for _, k := range []string{"Name", "IsDir", "Size", "FileMode", "ModTime", "ContentType"} {
			must.MapContainsKey(t, raw, k)
		}
	})
	t.Run("cat and readat", func(t *testing.T) {
		rc, err := c.AllocFS().Cat(alloc, "/sh/local/hello.txt", nil)
		must.NoError(t, err)
		body, err := io.ReadAll(rc)
		rc.Close()
		must.NoError(t, err)
		must.Eq(t, "hello world\n", string(body))

		rc, err = c.AllocFS().ReadAt(alloc, "sh/local/hello.txt", 6, 5, nil)
		must.NoError(t, err)
		body, err = io.ReadAll(rc)
		rc.Close()
		must.NoError(t, err)
		must.Eq(t, "world", string(body))

		rc, err = c.AllocFS().ReadAt(alloc, "sh/local/hello.txt", 6, 0, nil)
		must.NoError(t, err)
		body, err = io.ReadAll(rc)
		rc.Close()
		must.NoError(t, err)
		must.Eq(t, "world\n", string(body), must.Sprint("limit 0 reads to the end"))
	})
	t.Run("stream", func(t *testing.T) {
		frames := streamFrames(t, c, alloc, "sh/local/hello.txt", api.OriginStart, 0, 12)
		must.Eq(t, "hello world\n", string(frames[0].Data))
		must.Eq(t, "sh/local/hello.txt", frames[0].File)
		must.Eq(t, int64(12), frames[0].Offset)
		frames = streamFrames(t, c, alloc, "sh/local/hello.txt", api.OriginEnd, 6, 6)
		must.Eq(t, "world\n", string(frames[0].Data))

		res := doHTTP(t, ta, "GET", fsPath("stream", alloc.ID, url.Values{"path": {"sh/local/hello.txt"}, "follow": {"false"}, "plain": {"true"}, "offset": {"6"}}), nil, nil)
		must.Eq(t, 200, res.status)
		must.Eq(t, "world\n", res.body)
	})
	t.Run("stream follows a growing, truncated and deleted file", func(t *testing.T) {
		dir := ta.Agent.Client().TaskDir(alloc.ID, "sh")
		path := dir + "/local/grow.txt"
		must.NoError(t, os.WriteFile(path, []byte("one\n"), 0o644))
		req, err := http.NewRequest("GET", ta.URL()+fsPath("stream", alloc.ID, url.Values{"path": {"sh/local/grow.txt"}}), nil)
		must.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		next := func() api.StreamFrame {
			var f api.StreamFrame
			must.NoError(t, dec.Decode(&f))
			return f
		}
		must.Eq(t, "one\n", string(next().Data))
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		must.NoError(t, err)
		_, err = f.WriteString("two\n")
		must.NoError(t, err)
		f.Close()
		must.Eq(t, "two\n", string(next().Data))
		must.NoError(t, os.WriteFile(path, []byte("3\n"), 0o644))
		ev := next()
		must.Eq(t, "file truncated", ev.FileEvent)
		must.Eq(t, "3\n", string(next().Data))
		must.NoError(t, os.Remove(path))
		must.Eq(t, "file deleted", next().FileEvent)
		_, err = io.ReadAll(resp.Body)
		must.NoError(t, err, must.Sprint("the stream ends after a deletion"))
	})
	t.Run("refusals", func(t *testing.T) {
		cases := []struct {
			name   string
			op     string
			alloc  string
			params url.Values
			method string
			status int
			body   string
		}{
			{name: "secrets directory", op: "ls", params: url.Values{"path": {"sh/secrets"}}, status: 403,
				body: `Permission denied: "sh/secrets" is in a task's secrets directory, which is never readable through the file system API`},
			{name: "secret file", op: "cat", params: url.Values{"path": {"/sh/secrets/token"}}, status: 403},
			{name: "secret through a link", op: "cat", params: url.Values{"path": {"sh/local/token"}}, status: 403},
			{name: "secret by stream", op: "stream", params: url.Values{"path": {"sh/secrets/token"}}, status: 403},
			{name: "secret by readat", op: "readat", params: url.Values{"path": {"sh/secrets/token"}}, status: 403},
			{name: "secret stat", op: "stat", params: url.Values{"path": {"sh/secrets/token"}}, status: 403},
			{name: "dot dot", op: "cat", params: url.Values{"path": {"../../../etc/passwd"}}, status: 400,
				body: `invalid path "../../../etc/passwd": it leaves the allocation directory`},
			{name: "dot dot listing", op: "ls", params: url.Values{"path": {"sh/../.."}}, status: 400},
			{name: "link out", op: "cat", params: url.Values{"path": {"sh/local/passwd"}}, status: 400,
				body: `invalid path "sh/local/passwd": a link that leaves the allocation directory`},
			{name: "absolute path stays inside", op: "cat", params: url.Values{"path": {"/etc/passwd"}}, status: 404,
				body: `file "/etc/passwd" not found in the allocation directory`},
			{name: "cat of a directory", op: "cat", params: url.Values{"path": {"sh"}}, status: 400,
				body: `path "sh" is a directory: only files can be read`},
			{name: "cat without a path", op: "cat", params: url.Values{}, status: 400,
				body: "missing path: the path parameter names the file to read"},
			{name: "bad offset", op: "readat", params: url.Values{"path": {"sh/local/hello.txt"}, "offset": {"x"}}, status: 400,
				body: `invalid offset "x": an integer`},
			{name: "negative offset", op: "stream", params: url.Values{"path": {"sh/local/hello.txt"}, "offset": {"-1"}}, status: 400,
				body: `invalid offset -1: a number of bytes, not negative`},
			{name: "bad origin", op: "stream", params: url.Values{"path": {"sh/local/hello.txt"}, "origin": {"middle"}}, status: 400,
				body: `invalid origin "middle": start or end`},
			{name: "unknown allocation", op: "ls", alloc: "8b1c1f5e-0000-4000-8000-000000000000", params: url.Values{}, status: 404,
				body: "alloc not found"},
			{name: "wrong method", op: "ls", method: "DELETE", params: url.Values{}, status: 405},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				id := alloc.ID
				if tc.alloc != "" {
					id = tc.alloc
				}
				method := "GET"
				if tc.method != "" {
					method = tc.method
				}
				res := doHTTP(t, ta, method, fsPath(tc.op, id, tc.params), nil, nil)
				must.Eq(t, tc.status, res.status, must.Sprint(res.body))
				if tc.body != "" {
					must.Eq(t, tc.body, res.body)
				}
				must.StrNotContains(t, res.body, "s3cret")
				must.StrNotContains(t, res.body, "root:")
			})
		}
	})
}

func TestAllocFS_ACL(t *testing.T) {
	ta, root := newTestACLClientAgent(t)
	mgmt := ta.Client(root)
	mustUpsertPolicy(t, mgmt, "logs", `namespace "default" { capabilities = ["read-logs"] }`)
	mustUpsertPolicy(t, mgmt, "fs", `namespace "default" { capabilities = ["read-fs"] }`)
	mustUpsertPolicy(t, mgmt, "read", `namespace "default" { policy = "read" }`)
	alloc := fsReadyAlloc(t, ta, mgmt, root)
	const denied = `Permission denied: read-fs capability required in namespace "default"`
	cases := []struct {
		name   string
		token  string
		denied bool
	}{
		{name: "read-fs", token: mustCreateToken(t, mgmt, "fs", "fs").SecretID},
		{name: "management", token: root},
		{name: "read-logs only", token: mustCreateToken(t, mgmt, "logs", "logs").SecretID, denied: true},
		{name: "read policy", token: mustCreateToken(t, mgmt, "read", "read").SecretID, denied: true},
		{name: "no token", denied: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			header := http.Header{}
			if tc.token != "" {
				header.Set("X-Nomad-Token", tc.token)
			}
			for _, op := range []string{"ls", "stat", "cat", "readat", "stream"} {
				params := url.Values{"path": {"sh/local/hello.txt"}, "follow": {"false"}}
				if op == "ls" {
					params.Set("path", "sh/local")
				}
				res := doHTTP(t, ta, "GET", fsPath(op, alloc.ID, params), nil, header)
				if tc.denied {
					must.Eq(t, 403, res.status, must.Sprint(op))
					must.Eq(t, denied, res.body)
					continue
				}
				must.Eq(t, 200, res.status, must.Sprintf("%s: %s", op, res.body))
				if op == "cat" || op == "readat" {
					must.Eq(t, "hello world\n", res.body)
				}
			}
		})
	}
}

// TestAllocFS_RemoteNode: the allocation runs on a client-only agent; the server agent
// authorizes and relays every fs request over the client's own connection.
func TestAllocFS_RemoteNode(t *testing.T) {
	ta, rpcAddr := newRPCServerAgent(t, nil)
	ca := newClientOnlyAgent(t, rpcAddr)
	c := ta.Client("")
	alloc := fsReadyAlloc(t, ta, c, "")
	must.Eq(t, ca.Client().NodeID(), alloc.NodeID)

	files, _, err := c.AllocFS().List(alloc, "sh/local", nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, files)
	st, _, err := c.AllocFS().Stat(alloc, "sh/local/hello.txt", nil)
	must.NoError(t, err)
	must.Eq(t, int64(12), st.Size)
	rc, err := c.AllocFS().Cat(alloc, "sh/local/hello.txt", nil)
	must.NoError(t, err)
	body, err := io.ReadAll(rc)
	rc.Close()
	must.NoError(t, err)
	must.Eq(t, "hello world\n", string(body))
	rc, err = c.AllocFS().ReadAt(alloc, "sh/local/hello.txt", 0, 5, nil)
	must.NoError(t, err)
	body, err = io.ReadAll(rc)
	rc.Close()
	must.NoError(t, err)
	must.Eq(t, "hello", string(body))
	frames := streamFrames(t, c, alloc, "sh/local/hello.txt", api.OriginStart, 6, 6)
	must.Eq(t, "world\n", string(frames[0].Data))

	for _, tc := range []struct {
		op, path string
		status   int
	}{
		{op: "cat", path: "sh/secrets/token", status: 403},
		{op: "cat", path: "sh/local/passwd", status: 400},
		{op: "ls", path: "../..", status: 400},
		{op: "stat", path: "nope", status: 404},
	} {
		res := doHTTP(t, ta, "GET", fsPath(tc.op, alloc.ID, url.Values{"path": {tc.path}}), nil, nil)
		must.Eq(t, tc.status, res.status, must.Sprintf("%s %s: %s", tc.op, tc.path, res.body))
		must.False(t, strings.Contains(res.body, "s3cret"))
	}
}

// matrixFSEndpoints: read-fs in the allocation's namespace (the request's, for an unknown
// allocation), which only the write policy and management hold among the rows; an allowed
// cell learns the allocation does not exist.
func matrixFSEndpoints() []matrixEndpoint {
	allowReadFS := []string{rowWrite, rowManagement}
	return []matrixEndpoint{
		{name: "fs ls", method: "GET", path: "/v1/client/fs/ls/no-such-alloc?path=/", allow: allowReadFS, okStatus: 404},
		{name: "fs stat", method: "GET", path: "/v1/client/fs/stat/no-such-alloc?path=/", allow: allowReadFS, okStatus: 404},
		{name: "fs cat", method: "GET", path: "/v1/client/fs/cat/no-such-alloc?path=a", allow: allowReadFS, okStatus: 404},
		{name: "fs readat", method: "GET", path: "/v1/client/fs/readat/no-such-alloc?path=a&offset=0&limit=1", allow: allowReadFS, okStatus: 404},
		{name: "fs stream", method: "GET", path: "/v1/client/fs/stream/no-such-alloc?path=a", allow: allowReadFS, okStatus: 404},
	}
}

func TestACLMatrix_FS(t *testing.T) { runACLMatrix(t, matrixFSEndpoints(), matrixRows) }
