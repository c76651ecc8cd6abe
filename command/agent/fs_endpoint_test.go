package agent

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// shJob is a raw_exec job whose one task "sh" runs script; batch jobs end with it.
func shJob(id, jobType, script string) *api.Job {
	job := testJob(id)
	job.Type = new(jobType)
	task := job.TaskGroups[0].Tasks[0]
	task.Name = "sh"
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", script}}
	return job
}

// officialLogs reads a log through the official client's framed logs API until it ends.
func officialLogs(t *testing.T, c *api.Client, alloc *api.Allocation, task, logType string, follow bool, origin string, offset int64) (string, error) {
	t.Helper()
	cancel := make(chan struct{})
	defer close(cancel)
	frames, errCh := c.AllocFS().Logs(alloc, follow, task, logType, origin, offset, cancel, nil)
	var out strings.Builder
	timeout := time.After(20 * time.Second)
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				return out.String(), nil
			}
			out.Write(f.Data)
		case err := <-errCh:
			return out.String(), err
		case <-timeout:
			t.Fatalf("the log did not end; got so far: %q", out.String())
		}
	}
}

func logsPath(allocID string, params url.Values) string {
	return "/v1/client/fs/logs/" + allocID + "?" + params.Encode()
}

func TestAllocLogs(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	alloc := runningAlloc(t, c, shJob("talk", "service", "echo line1; echo line2; echo oops >&2; exec sleep 600"))
	eventually(t, 10*time.Second, "the task's output", func() (bool, string) {
		res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stderr"}, "plain": {"true"}}), nil, nil)
		return res.body == "oops\n", res.body
	})

	t.Run("official client", func(t *testing.T) {
		out, err := officialLogs(t, c, alloc, "sh", "stdout", false, "start", 0)
		must.NoError(t, err)
		must.Eq(t, "line1\nline2\n", out)
		out, err = officialLogs(t, c, alloc, "sh", "stderr", false, "start", 0)
		must.NoError(t, err)
		must.Eq(t, "oops\n", out)
		out, err = officialLogs(t, c, alloc, "sh", "stdout", false, "end", 6)
		must.NoError(t, err)
		must.Eq(t, "line2\n", out)
		out, err = officialLogs(t, c, alloc, "sh", "stdout", false, "start", 6)
		must.NoError(t, err)
		must.Eq(t, "line2\n", out)
	})
	t.Run("frames and plain", func(t *testing.T) {
		res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}}), nil, nil)
		must.Eq(t, 200, res.status)
		must.Eq(t, "application/json", res.header.Get("Content-Type"))
		must.Eq(t, `{"Offset":12,"Data":"bGluZTEKbGluZTIK","File":"alloc/logs/sh.stdout.0"}`+"\n", res.body)
		res = doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}, "plain": {"true"}, "origin": {"end"}, "offset": {"100"}}), nil, nil)
		must.Eq(t, "line1\nline2\n", res.body)
	})
	t.Run("bad requests", func(t *testing.T) {
		cases := []struct {
			name    string
			allocID string
			params  url.Values
			status  int
			body    string
		}{
			{name: "missing task", allocID: alloc.ID, params: url.Values{"type": {"stdout"}}, status: 400,
				body: "missing task: the task parameter names the task whose logs to read"},
			{name: "bad type", allocID: alloc.ID, params: url.Values{"task": {"sh"}, "type": {"stdin"}}, status: 400,
				body: `invalid log type "stdin": the type parameter is stdout or stderr`},
			{name: "bad origin", allocID: alloc.ID, params: url.Values{"task": {"sh"}, "type": {"stdout"}, "origin": {"middle"}}, status: 400,
				body: `invalid origin "middle": start or end`},
			{name: "bad offset", allocID: alloc.ID, params: url.Values{"task": {"sh"}, "type": {"stdout"}, "offset": {"-1"}}, status: 400,
				body: `invalid offset "-1": a number of bytes, not negative`},
			{name: "unknown task", allocID: alloc.ID, params: url.Values{"task": {"nope"}, "type": {"stdout"}}, status: 404,
				body: `task "nope" not found in allocation ` + alloc.ID},
			{name: "unknown allocation", allocID: "8b1c1f5e-0000-4000-8000-000000000000", params: url.Values{"task": {"sh"}, "type": {"stdout"}}, status: 404,
				body: "alloc not found"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				res := doHTTP(t, ta, "GET", logsPath(tc.allocID, tc.params), nil, nil)
				must.Eq(t, tc.status, res.status)
				must.Eq(t, tc.body, res.body)
			})
		}
	})
}

// TestAllocLogs_Follow: a followed log brings what the task writes later, and ends once the
// task is dead.
func TestAllocLogs_Follow(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	// The task waits for a file the test creates, so the second line surely comes after the
	// follow began.
	gate := t.TempDir() + "/go"
	alloc := runningAlloc(t, c, shJob("follow", "batch", "echo first; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo second"))
	eventually(t, 10*time.Second, "the first line", func() (bool, string) {
		res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}, "plain": {"true"}}), nil, nil)
		return res.body == "first\n", res.body
	})
	req, err := http.NewRequest("GET", ta.URL()+logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}, "plain": {"true"}, "follow": {"true"}}), nil)
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	first := make([]byte, len("first\n"))
	_, err = io.ReadFull(resp.Body, first)
	must.NoError(t, err)
	must.Eq(t, "first\n", string(first))

	must.NoError(t, os.WriteFile(gate, nil, 0o644))
	rest, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	must.Eq(t, "second\n", string(rest), must.Sprint("the stream ends with the task"))

	out, err := officialLogs(t, c, alloc, "sh", "stdout", true, "start", 0)
	must.NoError(t, err)
	must.Eq(t, "first\nsecond\n", out, must.Sprint("following a dead task's log reads it and ends"))
}

func TestAllocLogs_ACL(t *testing.T) {
	ta, root := newTestACLClientAgent(t)
	mgmt := ta.Client(root)
	alloc := runningAlloc(t, mgmt, shJob("talk", "service", "echo hello; exec sleep 600"))
	mustUpsertPolicy(t, mgmt, "logs", `namespace "default" { capabilities = ["read-logs"] }`)
	mustUpsertPolicy(t, mgmt, "fs", `namespace "default" { capabilities = ["read-fs"] }`)
	mustUpsertPolicy(t, mgmt, "read", `namespace "default" { policy = "read" }`)
	const denied = `Permission denied: read-logs capability required in namespace "default"`
	eventually(t, 10*time.Second, "the task's output", func() (bool, string) {
		res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}, "plain": {"true"}}),
			nil, http.Header{"X-Nomad-Token": {root}})
		return res.body == "hello\n", res.body
	})
	cases := []struct {
		name   string
		token  string
		denied bool
	}{
		{name: "read-logs", token: mustCreateToken(t, mgmt, "logs", "logs").SecretID},
		{name: "read-fs", token: mustCreateToken(t, mgmt, "fs", "fs").SecretID},
		{name: "management", token: root},
		{name: "read policy", token: mustCreateToken(t, mgmt, "read", "read").SecretID, denied: true},
		{name: "no token", denied: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			header := http.Header{}
			if tc.token != "" {
				header.Set("X-Nomad-Token", tc.token)
			}
			res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}, "plain": {"true"}}), nil, header)
			if tc.denied {
				must.Eq(t, 403, res.status)
				must.Eq(t, denied, res.body)
				return
			}
			must.Eq(t, 200, res.status)
			must.Eq(t, "hello\n", res.body)
		})
	}
}

// TestAllocLogs_FollowAcrossRotation: a followed log whose file is rotated (copied to an
// archive and truncated) goes on with what the task writes after the truncation.
func TestAllocLogs_FollowAcrossRotation(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Plugins = append(c.Plugins, &PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	})
	c := ta.Client("")
	gate := t.TempDir() + "/go"
	job := shJob("rotate", "batch", "head -c 1200000 /dev/zero | tr '\\0' x; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo after")
	job.TaskGroups[0].Tasks[0].LogConfig = &api.LogConfig{MaxFiles: new(2), MaxFileSizeMB: new(1)}
	alloc := runningAlloc(t, c, job)

	req, err := http.NewRequest("GET", ta.URL()+logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}, "plain": {"true"}, "follow": {"true"}}), nil)
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	first := make([]byte, 1200000)
	_, err = io.ReadFull(resp.Body, first)
	must.NoError(t, err)

	archive := filepath.Join(filepath.Dir(ta.Agent.Client().TaskDir(alloc.ID, "sh")), "alloc", "logs", "sh.stdout.1")
	eventually(t, 10*time.Second, "the rotation", func() (bool, string) {
		_, err := os.Stat(archive)
		return err == nil, fmt.Sprint(err)
	})
	must.NoError(t, os.WriteFile(gate, nil, 0o644))
	rest, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	must.Eq(t, "after\n", string(rest))
}

// TestAllocLogs_SpansArchives: offsets from the start and from the end count across the
// rotated archives (oldest first) and the live file, through the official client too.
func TestAllocLogs_SpansArchives(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	alloc := runningAlloc(t, c, shJob("arch", "service", "echo live; exec sleep 600"))
	eventually(t, 10*time.Second, "the task's output", func() (bool, string) {
		res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}, "plain": {"true"}}), nil, nil)
		return res.body == "live\n", res.body
	})
	logs := filepath.Join(filepath.Dir(ta.Agent.Client().TaskDir(alloc.ID, "sh")), "alloc", "logs")
	must.NoError(t, os.WriteFile(filepath.Join(logs, "sh.stdout.1"), []byte("a1\na2\n"), 0o644))
	must.NoError(t, os.WriteFile(filepath.Join(logs, "sh.stdout.2"), []byte("b1\n"), 0o644))

	cases := []struct {
		name   string
		origin string
		offset int64
		want   string
	}{
		{name: "whole log", origin: "start", want: "a1\na2\nb1\nlive\n"},
		{name: "from inside the first archive", origin: "start", offset: 3, want: "a2\nb1\nlive\n"},
		{name: "last bytes across archives", origin: "end", offset: 8, want: "b1\nlive\n"},
		{name: "more than there is from the end", origin: "end", offset: 1000, want: "a1\na2\nb1\nlive\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := officialLogs(t, c, alloc, "sh", "stdout", false, tc.origin, tc.offset)
			must.NoError(t, err)
			must.Eq(t, tc.want, out)
		})
	}
	res := doHTTP(t, ta, "GET", logsPath(alloc.ID, url.Values{"task": {"sh"}, "type": {"stdout"}}), nil, nil)
	must.Eq(t, `{"Offset":6,"Data":"YTEKYTIK","File":"alloc/logs/sh.stdout.1"}`+"\n"+
		`{"Offset":3,"Data":"YjEK","File":"alloc/logs/sh.stdout.2"}`+"\n"+
		`{"Offset":5,"Data":"bGl2ZQo=","File":"alloc/logs/sh.stdout.0"}`+"\n", res.body)
}
