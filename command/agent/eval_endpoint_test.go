package agent

import (
	"net/url"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestEvalEndpoint(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	web, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	api1, _, err := c.Jobs().Register(testJob("api"), nil)
	must.NoError(t, err)

	cases := []struct {
		name    string
		query   string
		wantIDs []string
	}{
		{name: "all", query: "", wantIDs: []string{web.EvalID, api1.EvalID}},
		{name: "by job", query: "?job=web", wantIDs: []string{web.EvalID}},
		{name: "by status", query: "?status=pending", wantIDs: []string{web.EvalID, api1.EvalID}},
		{name: "by other status", query: "?status=complete", wantIDs: nil},
		{name: "by prefix", query: "?prefix=" + web.EvalID[:8], wantIDs: []string{web.EvalID}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var evals []*api.Evaluation
			qm, err := c.Raw().Query("/v1/evaluations"+tc.query, &evals, nil)
			must.NoError(t, err)
			must.Positive(t, qm.LastIndex)
			var ids []string
			for _, e := range evals {
				ids = append(ids, e.ID)
			}
			must.SliceContainsAll(t, tc.wantIDs, ids)
		})
	}

	t.Run("read", func(t *testing.T) {
		eval, qm, err := c.Evaluations().Info(web.EvalID, nil)
		must.NoError(t, err)
		must.Eq(t, "web", eval.JobID)
		must.Eq(t, "pending", eval.Status)
		must.Positive(t, qm.LastIndex)
	})

	t.Run("missing", func(t *testing.T) {
		res := doHTTP(t, ta, "GET", "/v1/evaluation/nope", nil, nil)
		must.Eq(t, 404, res.status)
		must.Eq(t, "eval not found", res.body)
		// An unknown evaluation placed nothing: an empty list, as upstream.
		res = doHTTP(t, ta, "GET", "/v1/evaluation/nope/allocations", nil, nil)
		must.Eq(t, 200, res.status)
		must.Eq(t, "[]", strings.TrimSpace(res.body))
	})

	t.Run("allocations", func(t *testing.T) {
		allocs, _, err := c.Evaluations().Allocations(web.EvalID, nil)
		must.NoError(t, err)
		must.SliceEmpty(t, allocs)
	})

	t.Run("count", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			filter string
			want   int
		}{
			{name: "all", want: 2},
			{name: "filtered", filter: `JobID == "web"`, want: 1},
			{name: "none", filter: `Status == "failed"`, want: 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, qm, err := c.Evaluations().Count(&api.QueryOptions{Filter: tc.filter})
				must.NoError(t, err)
				must.Eq(t, tc.want, resp.Count)
				must.Positive(t, qm.LastIndex)
			})
		}
		res := doHTTP(t, ta, "GET", "/v1/evaluations/count?filter="+url.QueryEscape(`JobID ==`), nil, nil)
		must.Eq(t, 400, res.status)
	})
}
