package agent

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// deepJSON is a JSON value depth levels deep ({"a":{"a":...}}).
func deepJSON(depth int) string {
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

// jobBodyWithConfig is a register body whose task config holds extra under "nest".
func jobBodyWithConfig(id, extra string) string {
	return `{"Job":{"ID":"` + id + `","Name":"` + id + `","Type":"service","Datacenters":["dc1"],"TaskGroups":[{"Name":"g","Count":1,` +
		`"Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true","nest":` + extra + `}}]}]}}`
}

// Security finding 3: a job whose task config nests ~1,030 levels was accepted over HTTP and
// then could not be decoded from the Raft log, crashing the server on every start. It must
// be refused with a 400 naming the limit, change nothing, and leave the server serving.
func TestSecurity_DeepJobBodyRefused(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	before := ta.Server().State().LatestIndex()

	cases := []struct {
		name   string
		method string
		path   string
		body   string
	}{
		{name: "register", method: "PUT", path: "/v1/jobs", body: jobBodyWithConfig("deep", deepJSON(1030))},
		{name: "update", method: "PUT", path: "/v1/job/web", body: jobBodyWithConfig("web", deepJSON(1030))},
		{name: "just over the limit", method: "PUT", path: "/v1/jobs", body: jobBodyWithConfig("deep", deepJSON(125))},
		{name: "arrays", method: "PUT", path: "/v1/jobs", body: jobBodyWithConfig("deep", strings.Repeat("[", 5000)+strings.Repeat("]", 5000))},
		{name: "another endpoint", method: "PUT", path: "/v1/namespace/x", body: `{"Name":"x","Meta":` + deepJSON(200) + `}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, tc.method, tc.path, strings.NewReader(tc.body), nil)
			must.Eq(t, http.StatusBadRequest, res.status, must.Sprint(truncate(res.body)))
			must.Eq(t, "request body nests deeper than 128 levels", res.body)
			must.Eq(t, before, ta.Server().State().LatestIndex())
		})
	}

	t.Run("strings do not count", func(t *testing.T) {
		brackets, err := json.Marshal(strings.Repeat("[{", 1000))
		must.NoError(t, err)
		res := doHTTP(t, ta, "PUT", "/v1/jobs", strings.NewReader(jobBodyWithConfig("brackets", string(brackets))), nil)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(truncate(res.body)))
	})

	t.Run("deep but within the limit round-trips", func(t *testing.T) {
		res := doHTTP(t, ta, "PUT", "/v1/jobs", strings.NewReader(jobBodyWithConfig("within", deepJSON(100))), nil)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(truncate(res.body)))
		job, _, err := c.Jobs().Info("within", nil)
		must.NoError(t, err)
		var want any
		must.NoError(t, json.Unmarshal([]byte(deepJSON(100)), &want))
		got, err := json.Marshal(job.TaskGroups[0].Tasks[0].Config["nest"])
		must.NoError(t, err)
		must.Eq(t, deepJSON(100), string(got))
	})

	t.Run("server still serves", func(t *testing.T) {
		_, _, err := c.Jobs().Register(testJob("after"), nil)
		must.NoError(t, err)
		job, _, err := c.Jobs().Info("after", nil)
		must.NoError(t, err)
		must.Eq(t, "after", *job.ID)
	})
}

// decodeBody holds every body to both limits itself, not only behind the handler wrapper.
func TestSecurity_DecodeBodyLimits(t *testing.T) {
	cases := []struct {
		name string
		body string
		want error
	}{
		{name: "too deep", body: `{"Job":` + deepJSON(200) + `}`, want: errBodyTooDeep},
		{name: "too large", body: `{"Job":{"Meta":{"pad":"` + strings.Repeat("x", maxRequestBodySize) + `"}}}`, want: errBodyTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, decode := range []func(*http.Request, any) error{decodeBody, decodeOptionalBody} {
				r := httptest.NewRequest(http.MethodPut, "/v1/jobs", strings.NewReader(tc.body))
				var out api.JobRegisterRequest
				must.Eq(t, tc.want, decode(r, &out))
			}
		})
	}
}

// Security finding 6 over the API: the parse bomb gets a 400 naming the limit, and so do
// the same attacks through the variables file and a deeply nested HCL task config.
// stepsOrDeadline marks a case that either of the two time-bound budgets may refuse.
const stepsOrDeadline = "job spec exceeds the evaluation budget: evaluation "

func TestSecurity_JobsParseBombRefused(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()

	deepConfig := "job \"j\" {\n group \"g\" {\n task \"t\" {\n driver = \"raw_exec\"\n config {\n" +
		strings.Repeat("a {\n", 1030) + strings.Repeat("}\n", 1030) + "}\n}\n}\n}\n"
	cases := []struct {
		name string
		req  api.JobsParseRequest
		want string
	}{
		{name: "two nested for over range(1024)", req: api.JobsParseRequest{JobHCL: `
locals {
  grid = [for i in range(1024) : [for j in range(1024) : "${i}-${j}"]]
}
job "bomb" {
  meta = { size = length(flatten(local.grid)) }
}`}, want: stepsOrDeadline},
		{name: "three nested for over range(1024)", req: api.JobsParseRequest{JobHCL: `
job "bomb" {
  meta = {
    x = jsonencode([for i in range(1024) : [for j in range(1024) : [for k in range(1024) : i + j + k]]])
  }
}`}, want: stepsOrDeadline},
		{name: "range over the collection limit",
			req:  api.JobsParseRequest{JobHCL: `job "j" { meta = { x = length(flatten([for i in range(1024) : range(20)])) } }`},
			want: "job spec exceeds the evaluation budget: collection of 20480 elements is over the limit of 10000"},
		{name: "deep task config", req: api.JobsParseRequest{JobHCL: deepConfig},
			want: "source nests deeper than 128 levels"},
		{name: "variables file", req: api.JobsParseRequest{
			JobHCL:    "variable \"v\" {\n  type = list(list(number))\n}\njob \"j\" { meta = { x = length(var.v) } }\n",
			Variables: "v = [for i in [" + strings.Repeat("1,", 1024) + "1] : [for j in [" + strings.Repeat("1,", 1024) + "1] : j]]\n",
		}, want: "job spec exceeds the evaluation budget: evaluation needs more than"},
		{name: "variables file nesting", req: api.JobsParseRequest{
			JobHCL:    "job \"j\" {}\n",
			Variables: "v = " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n",
		}, want: "Failed to parse variables: variables.hcl:1,"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jobs.ParseHCLOpts(&tc.req)
			if tc.want == stepsOrDeadline {
				// On a loaded machine the 5 s deadline may come before the step count does;
				// either way the budget refused the spec.
				status, body := responseError(t, err)
				must.Eq(t, http.StatusBadRequest, status)
				must.True(t, strings.Contains(body, "evaluation needs more than 1000000 steps") ||
					strings.Contains(body, "evaluation ran past its deadline"), must.Sprintf("body: %s", body))
				return
			}
			status, body := responseError(t, err)
			must.Eq(t, http.StatusBadRequest, status)
			must.StrContains(t, body, tc.want)
		})
	}
}
