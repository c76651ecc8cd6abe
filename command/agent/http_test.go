package agent

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// testJob is a small valid service job: one group "web" of count 1 with one raw_exec task.
func testJob(id string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("sleep", "raw_exec").
		SetConfig("command", "/bin/sleep").
		SetConfig("args", []string{"600"})
	task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
	job.AddTaskGroup(api.NewTaskGroup("web", 1).AddTask(task))
	return job
}

// httpResult is one raw HTTP exchange, for what the official client hides: status lines,
// headers and exact bodies.
type httpResult struct {
	status int
	header http.Header
	body   string
}

// doHTTP sends one request through the official client's transport and reads the answer.
func doHTTP(t *testing.T, ta *TestAgent, method, path string, body io.Reader, header http.Header) httpResult {
	t.Helper()
	req, err := http.NewRequest(method, ta.URL()+path, body)
	must.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	return sendHTTP(t, ta.Client("").Raw(), req)
}

// sendHTTP sends req through c and reads the whole answer.
func sendHTTP(t *testing.T, c interface {
	Do(*http.Request) (*http.Response, error)
}, req *http.Request) httpResult {
	t.Helper()
	resp, err := c.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return httpResult{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

// responseError unpacks the status and body of an error from the official client.
func responseError(t *testing.T, err error) (int, string) {
	t.Helper()
	must.Error(t, err)
	var ure api.UnexpectedResponseError
	must.True(t, errors.As(err, &ure), must.Sprintf("not an HTTP error: %v", err))
	return ure.StatusCode(), ure.Body()
}

func TestHTTP_CommonParameters(t *testing.T) {
	ta := NewTestAgent(t, nil)
	_, _, err := ta.Client("").Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	cases := []struct {
		name       string
		method     string
		path       string
		header     http.Header
		wantStatus int
		wantBody   string
	}{
		{name: "bad index", method: "GET", path: "/v1/jobs?index=abc", wantStatus: 400, wantBody: "Unable to parse index: "},
		{name: "bad wait", method: "GET", path: "/v1/jobs?wait=soon", wantStatus: 400, wantBody: "Invalid wait time"},
		{name: "bad stale", method: "GET", path: "/v1/jobs?stale=perhaps", wantStatus: 400, wantBody: `"stale"`},
		{name: "stale without value", method: "GET", path: "/v1/jobs?stale", wantStatus: 200, wantBody: `"ID":"web"`},
		{name: "wrong method", method: "PATCH", path: "/v1/job/web", wantStatus: 405, wantBody: "Invalid method"},
		{name: "wrong method on list", method: "DELETE", path: "/v1/jobs", wantStatus: 405, wantBody: "Invalid method"},
		{name: "unknown path", method: "GET", path: "/v1/nonsense", wantStatus: 404, wantBody: "Invalid URL path"},
		{name: "unknown region", method: "GET", path: "/v1/jobs?region=mars", wantStatus: 500, wantBody: "No path to region"},
		{name: "own region", method: "GET", path: "/v1/jobs?region=global", wantStatus: 200, wantBody: `"ID":"web"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, tc.method, tc.path, nil, tc.header)
			must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantBody)
			if tc.wantStatus >= 400 {
				must.Eq(t, "text/plain; charset=utf-8", res.header.Get("Content-Type"))
			} else {
				must.Eq(t, "application/json", res.header.Get("Content-Type"))
			}
		})
	}
}

func TestHTTP_ReadHeaders(t *testing.T) {
	ta := NewTestAgent(t, nil)
	res := doHTTP(t, ta, "GET", "/v1/jobs", nil, nil)
	must.Eq(t, 200, res.status)
	must.Eq(t, "[]", res.body)
	must.NotEq(t, "", res.header.Get("X-Nomad-Index"))
	must.NotEq(t, "0", res.header.Get("X-Nomad-Index"))
	must.Eq(t, "true", res.header.Get("X-Nomad-KnownLeader"))
	must.Eq(t, "0", res.header.Get("X-Nomad-LastContact"))
}

func TestHTTP_PrettyAndGzip(t *testing.T) {
	ta := NewTestAgent(t, nil)
	_, _, err := ta.Client("").Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	t.Run("pretty", func(t *testing.T) {
		res := doHTTP(t, ta, "GET", "/v1/job/web?pretty", nil, nil)
		must.Eq(t, 200, res.status)
		must.StrHasPrefix(t, "{\n    \"Stop\": false,", res.body)
	})

	t.Run("gzip", func(t *testing.T) {
		// A request that sets Accept-Encoding itself gets the compressed bytes as sent.
		res := doHTTP(t, ta, "GET", "/v1/job/web", nil, http.Header{"Accept-Encoding": {"gzip"}})
		must.Eq(t, 200, res.status)
		must.Eq(t, "gzip", res.header.Get("Content-Encoding"))
		zr, err := gzip.NewReader(strings.NewReader(res.body))
		must.NoError(t, err)
		plain, err := io.ReadAll(zr)
		must.NoError(t, err)
		var job api.Job
		must.NoError(t, json.Unmarshal(plain, &job))
		must.Eq(t, "web", *job.ID)
	})

	t.Run("official client decodes compressed answers", func(t *testing.T) {
		job, _, err := ta.Client("").Jobs().Info("web", nil)
		must.NoError(t, err)
		must.Eq(t, "web", *job.ID)
	})
}

func TestHTTP_Token(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)

	cases := []struct {
		name       string
		header     http.Header
		wantStatus int
	}{
		{name: "no token", wantStatus: 403},
		{name: "X-Nomad-Token", header: http.Header{"X-Nomad-Token": {root}}, wantStatus: 200},
		{name: "bearer", header: http.Header{"Authorization": {"Bearer " + root}}, wantStatus: 200},
		{name: "unknown token", header: http.Header{"X-Nomad-Token": {"6d1c5c4e-0000-0000-0000-000000000000"}}, wantStatus: 403},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, "GET", "/v1/jobs", nil, tc.header)
			must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
			if tc.wantStatus == 403 {
				must.StrHasPrefix(t, "Permission denied", res.body)
			}
		})
	}
}

func TestHTTP_PanicIsA500(t *testing.T) {
	ta := NewTestAgent(t, nil)
	h := ta.Agent.http.wrap(func(http.ResponseWriter, *http.Request) (any, error) {
		panic("boom")
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/boom", nil))
	must.Eq(t, 500, rec.Code)
	must.Eq(t, "internal server error", rec.Body.String())

	// The agent keeps serving.
	_, err := ta.Client("").Status().Leader()
	must.NoError(t, err)
}

func TestHTTP_BodyLimit(t *testing.T) {
	ta := NewTestAgent(t, nil)

	t.Run("declared length", func(t *testing.T) {
		big := bytes.Repeat([]byte("x"), maxRequestBodySize+1)
		_, err := ta.Client("").Raw().Write("/v1/jobs", bytes.NewReader(big), nil, nil)
		status, body := responseError(t, err)
		must.Eq(t, 413, status)
		must.StrContains(t, body, "Request body too large")
	})

	t.Run("streamed without length", func(t *testing.T) {
		// No Content-Length: the limit is met while decoding.
		prefix := `{"Job":{"ID":"big","Meta":{"pad":"`
		big := io.MultiReader(strings.NewReader(prefix), bytes.NewReader(bytes.Repeat([]byte("x"), maxRequestBodySize)))
		res := doHTTP(t, ta, "PUT", "/v1/jobs", io.NopCloser(big), nil)
		must.Eq(t, 413, res.status)
		must.StrContains(t, res.body, "Request body too large")
	})
}

// stringBody is a request body, or none for "".
func stringBody(s string) io.Reader {
	if s == "" {
		return nil
	}
	return strings.NewReader(s)
}
