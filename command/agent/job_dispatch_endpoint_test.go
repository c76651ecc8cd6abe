package agent

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// paramJob is a parameterized batch job: payload mode, required and optional meta.
func paramJob(id, payload string, required, optional []string) *api.Job {
	job := testJob(id)
	job.Type = new("batch")
	job.ParameterizedJob = &api.ParameterizedJobConfig{Payload: payload, MetaRequired: required, MetaOptional: optional}
	return job
}

func matrixJobDispatchEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{
			// dispatch-job, which only `policy = "write"` grants among the rows.
			name: "job dispatch", method: "PUT", path: "/v1/job/tmpl/dispatch",
			body: `{"Payload":"aGVsbG8=","Meta":{"k":"v"}}`,
			setup: func(t *testing.T, f *matrixFixture) {
				_, _, err := f.mgmt.Jobs().Register(paramJob("tmpl", "optional", nil, []string{"k"}), nil)
				must.NoError(t, err)
			},
			allow: []string{rowWrite, rowManagement},
			check: func(t *testing.T, f *matrixFixture) {
				children, _, err := f.mgmt.Jobs().PrefixList("tmpl/dispatch-")
				must.NoError(t, err)
				must.SliceNotEmpty(t, children)
			},
		},
	}
}

func TestACLMatrix_JobDispatch(t *testing.T) {
	runACLMatrix(t, matrixJobDispatchEndpoints(), matrixRows)
}

func TestJobDispatch_Validation(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	for _, j := range []*api.Job{
		paramJob("optional", "optional", []string{"need"}, []string{"may"}),
		paramJob("required", "required", nil, nil),
		paramJob("forbidden", "forbidden", nil, nil),
		testJob("plain"),
	} {
		_, _, err := c.Jobs().Register(j, nil)
		must.NoError(t, err)
	}
	big := bytes.Repeat([]byte("x"), structs.DispatchPayloadSizeLimit+1)
	cases := []struct {
		name    string
		job     string
		meta    map[string]string
		payload []byte
		opts    api.DispatchOptions
		status  int
		wantErr string
	}{
		{name: "payload too large", job: "required", payload: big, status: 400, wantErr: "Payload exceeds maximum size; 16385 > 16384"},
		{name: "payload at the limit", job: "required", payload: big[:structs.DispatchPayloadSizeLimit], status: 200},
		{name: "payload required", job: "required", status: 400, wantErr: "Payload is not provided but required"},
		{name: "payload forbidden", job: "forbidden", payload: []byte("x"), status: 400, wantErr: "Payload provided but forbidden"},
		{name: "required meta missing", job: "optional", meta: map[string]string{"may": "1"}, status: 400, wantErr: `did not provide required meta keys: "need"`},
		{name: "unknown meta", job: "optional", meta: map[string]string{"need": "1", "what": "2"}, status: 400, wantErr: `unpermitted metadata keys: "what"`},
		{name: "meta value too long", job: "optional", meta: map[string]string{"need": strings.Repeat("v", 1025)}, status: 400, wantErr: `Meta "need": value must be at most 1024 bytes`},
		{name: "priority out of range", job: "optional", meta: map[string]string{"need": "1"}, opts: api.DispatchOptions{Priority: 101}, status: 400, wantErr: "Priority must be between [1, 100]"},
		{name: "prefix with a slash", job: "optional", meta: map[string]string{"need": "1"}, opts: api.DispatchOptions{IdPrefixTemplate: "a/b"}, status: 400, wantErr: "IdPrefixTemplate must not contain"},
		{name: "not parameterized", job: "plain", status: 400, wantErr: "not a parameterized job"},
		{name: "no such job", job: "nope", status: 404, wantErr: "job not found"},
		{name: "meta ok", job: "optional", meta: map[string]string{"need": "1", "may": "2"}, status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ta.Server().State().LatestIndex()
			opts := tc.opts
			opts.JobID, opts.Meta, opts.Payload = tc.job, tc.meta, tc.payload
			resp, _, err := c.Jobs().DispatchOpts(&opts, nil)
			if tc.status != 200 {
				must.ErrorContains(t, err, tc.wantErr)
				must.StrContains(t, err.Error(), "Unexpected response code: "+strconv.Itoa(tc.status))
				// A refused dispatch stores nothing.
				must.Eq(t, before, ta.Server().State().LatestIndex())
				return
			}
			must.NoError(t, err)
			must.StrHasPrefix(t, tc.job+"/dispatch-", resp.DispatchedJobID)
			must.UUIDv4(t, resp.EvalID)
			child, _, err := c.Jobs().Info(resp.DispatchedJobID, nil)
			must.NoError(t, err)
			must.Eq(t, tc.job, *child.ParentID)
			must.True(t, child.Dispatched)
			must.Eq(t, tc.payload, child.Payload)
			for k, v := range tc.meta {
				must.Eq(t, v, child.Meta[k])
			}
		})
	}
}

func TestJobDispatch_IDsAndIdempotency(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, _, err := c.Jobs().Register(paramJob("tmpl", "optional", nil, nil), nil)
	must.NoError(t, err)

	// The parent itself is never evaluated: it is running, with no evaluation and no allocation.
	parent, _, err := c.Jobs().Info("tmpl", nil)
	must.NoError(t, err)
	must.Eq(t, "running", *parent.Status)
	evals, _, err := c.Jobs().Evaluations("tmpl", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, evals)

	resp, _, err := c.Jobs().Dispatch("tmpl", nil, nil, "", nil)
	must.NoError(t, err)
	must.RegexMatch(t, regexp.MustCompile(`^tmpl/dispatch-\d+-[0-9a-f]{8}$`), resp.DispatchedJobID)
	resp, _, err = c.Jobs().Dispatch("tmpl", nil, nil, "nightly", nil)
	must.NoError(t, err)
	must.RegexMatch(t, regexp.MustCompile(`^tmpl/dispatch-nightly-\d+-[0-9a-f]{8}$`), resp.DispatchedJobID)

	// A token dispatches once; the same token answers with the same child and writes nothing.
	first, _, err := c.Jobs().Dispatch("tmpl", nil, nil, "", &api.WriteOptions{IdempotencyToken: "once"})
	must.NoError(t, err)
	index := ta.Server().State().LatestIndex()
	again, _, err := c.Jobs().Dispatch("tmpl", nil, nil, "", &api.WriteOptions{IdempotencyToken: "once"})
	must.NoError(t, err)
	must.Eq(t, first.DispatchedJobID, again.DispatchedJobID)
	must.Eq(t, index, ta.Server().State().LatestIndex())
	other, _, err := c.Jobs().Dispatch("tmpl", nil, nil, "", &api.WriteOptions{IdempotencyToken: "twice"})
	must.NoError(t, err)
	must.NotEq(t, first.DispatchedJobID, other.DispatchedJobID)

	// Wrong method, and a body that does not decode.
	res := doHTTP(t, ta, "GET", "/v1/job/tmpl/dispatch", nil, nil)
	must.Eq(t, http.StatusMethodNotAllowed, res.status)
	res = doHTTP(t, ta, "PUT", "/v1/job/tmpl/dispatch", strings.NewReader(`{"Payload":"not base64!"}`), nil)
	must.Eq(t, http.StatusBadRequest, res.status)
	res = doHTTP(t, ta, "PUT", "/v1/job/tmpl/dispatch?"+url.Values{"idempotency_token": {strings.Repeat("t", 257)}}.Encode(), nil, nil)
	must.Eq(t, http.StatusBadRequest, res.status)
	must.StrContains(t, res.body, "idempotency_token must be at most 256 characters")
}

// TestJobDispatch_TaskReadsPayload runs a dispatched batch job on the agent's own client: the
// payload is in the file its dispatch_payload block names, in the task's local directory,
// before the task starts.
func TestJobDispatch_TaskReadsPayload(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := api.NewBatchJob("reader", "reader", "global", 50)
	job.Datacenters = []string{"dc1"}
	job.ParameterizedJob = &api.ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"who"}}
	task := api.NewTask("sh", "raw_exec").SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", `test "$(cat "$NOMAD_TASK_DIR/in/payload.txt")" = "hello payload" && echo "read: $(cat local/in/payload.txt) for $NOMAD_META_who"`})
	task.DispatchPayload = &api.DispatchPayloadConfig{File: "in/payload.txt"}
	job.AddTaskGroup(api.NewTaskGroup("work", 1).AddTask(task))
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)

	resp, _, err := c.Jobs().Dispatch("reader", map[string]string{"who": "tester"}, []byte("hello payload"), "", nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, resp.DispatchedJobID, map[string]int{"complete": 1})
	jobStatus(t, c, resp.DispatchedJobID, "dead")
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	out, err := officialLogs(t, c, alloc, "sh", "stdout", false, "start", 0)
	must.NoError(t, err)
	must.Eq(t, "read: hello payload for tester\n", out)

	// The parameterized parent never got an allocation.
	parentAllocs, _, err := c.Jobs().Allocations("reader", false, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, parentAllocs)
}
