package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad/nomadtest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// listFixture is an agent with five jobs ("a" stopped), an evaluation per registration and
// three allocations of job "b" with different client statuses.
type listFixture struct {
	ta     *TestAgent
	root   string
	allocs []string // IDs in creation order
	evals  []string // IDs in creation order
}

func newListFixture(t *testing.T) *listFixture {
	t.Helper()
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	for _, id := range []string{"c", "a", "e", "b", "d"} {
		_, _, err := c.Jobs().Register(testJob(id), nil)
		must.NoError(t, err)
	}
	_, _, err := c.Jobs().Deregister("a", false, nil)
	must.NoError(t, err)
	job, err := ta.Server().State().JobByID(nil, "default", "b")
	must.NoError(t, err)
	f := &listFixture{ta: ta, root: root}
	for i, status := range []string{"running", "failed", "running"} {
		// IDs sort against creation order, so paging by create index is seen to differ from
		// paging by ID.
		a := &structs.Allocation{ID: fmt.Sprintf("a%d000000-0000-4000-8000-000000000000", 9-i),
			Name: fmt.Sprintf("b.web[%d]", i), TaskGroup: "web", ClientStatus: status}
		nomadtest.PlaceAllocs(t, ta.Server(), job, a)
		f.allocs = append(f.allocs, a.ID)
	}
	evals, _, err := c.Evaluations().List(nil)
	must.NoError(t, err)
	slices.SortFunc(evals, func(a, b *api.Evaluation) int { return int(a.CreateIndex) - int(b.CreateIndex) })
	for _, e := range evals {
		f.evals = append(f.evals, e.ID)
	}
	return f
}

// get lists path with the query and returns the IDs (field idField of each entry) and the
// next token header.
func (f *listFixture) get(t *testing.T, path, idField string, query url.Values) (int, []string, string, string) {
	t.Helper()
	res := doHTTP(t, f.ta, http.MethodGet, path+"?"+query.Encode(), nil, http.Header{"X-Nomad-Token": {f.root}})
	if res.status != http.StatusOK {
		return res.status, nil, "", res.body
	}
	var entries []map[string]any
	must.NoError(t, json.Unmarshal([]byte(res.body), &entries))
	ids := []string{}
	for _, e := range entries {
		ids = append(ids, e[idField].(string))
	}
	return res.status, ids, res.header.Get("X-Nomad-NextToken"), res.body
}

func TestSecurity_ListFilterAndPagination(t *testing.T) {
	f := newListFixture(t)
	a, e := f.allocs, f.evals
	cases := []struct {
		name      string
		path      string
		idField   string
		query     url.Values
		want      []string
		wantToken string
	}{
		{name: "jobs by ID", path: "/v1/jobs", idField: "ID", want: []string{"a", "b", "c", "d", "e"}},
		{name: "jobs filter", path: "/v1/jobs", idField: "ID", query: url.Values{"filter": {`Status == "dead"`}}, want: []string{"a"}},
		{name: "jobs filter negated", path: "/v1/jobs", idField: "ID", query: url.Values{"filter": {`Status != "dead"`}},
			want: []string{"b", "c", "d", "e"}},
		{name: "jobs first page", path: "/v1/jobs", idField: "ID", query: url.Values{"per_page": {"2"}},
			want: []string{"a", "b"}, wantToken: "default.c"},
		{name: "jobs next page", path: "/v1/jobs", idField: "ID", query: url.Values{"per_page": {"2"}, "next_token": {"default.c"}},
			want: []string{"c", "d"}, wantToken: "default.e"},
		{name: "jobs last page", path: "/v1/jobs", idField: "ID", query: url.Values{"per_page": {"2"}, "next_token": {"default.e"}},
			want: []string{"e"}},
		{name: "jobs reverse", path: "/v1/jobs", idField: "ID", query: url.Values{"reverse": {"true"}, "per_page": {"3"}},
			want: []string{"e", "d", "c"}, wantToken: "default.b"},
		{name: "jobs filter and page", path: "/v1/jobs", idField: "ID",
			query: url.Values{"filter": {`Status != "dead"`}, "per_page": {"3"}}, want: []string{"b", "c", "d"}, wantToken: "default.e"},

		{name: "allocations by create index", path: "/v1/allocations", idField: "ID", want: a},
		{name: "allocations filter", path: "/v1/allocations", idField: "ID", query: url.Values{"filter": {`ClientStatus == "running"`}},
			want: []string{a[0], a[2]}},
		{name: "allocations filter on the job", path: "/v1/allocations", idField: "ID", query: url.Values{"filter": {`JobID == "c"`}},
			want: []string{}},
		{name: "allocations first page", path: "/v1/allocations", idField: "ID", query: url.Values{"per_page": {"1"}},
			want: a[:1], wantToken: fmt.Sprintf("%d.%s", allocIndex(t, f, a[1]), a[1])},
		{name: "allocations next page", path: "/v1/allocations", idField: "ID",
			query: url.Values{"per_page": {"1"}, "next_token": {fmt.Sprintf("%d.%s", allocIndex(t, f, a[1]), a[1])}},
			want:  a[1:2], wantToken: fmt.Sprintf("%d.%s", allocIndex(t, f, a[2]), a[2])},
		{name: "allocations asked by ID prefix are paged by ID", path: "/v1/allocations", idField: "ID",
			query: url.Values{"prefix": {"a"}, "per_page": {"2"}}, want: []string{a[2], a[1]}, wantToken: a[0]},

		{name: "evaluations by create index", path: "/v1/evaluations", idField: "ID", want: e},
		{name: "evaluations filter", path: "/v1/evaluations", idField: "ID", query: url.Values{"filter": {`JobID == "e"`}},
			want: e[2:3]},
		{name: "evaluations filter or", path: "/v1/evaluations", idField: "ID", query: url.Values{"filter": {`JobID == "c" or JobID == "a"`}},
			want: []string{e[0], e[1], e[5]}},
		{name: "evaluations pages", path: "/v1/evaluations", idField: "ID", query: url.Values{"per_page": {"4"}},
			want: e[:4], wantToken: fmt.Sprintf("%d.%s", evalIndex(t, f, e[4]), e[4])},
		{name: "evaluations next page", path: "/v1/evaluations", idField: "ID",
			query: url.Values{"per_page": {"4"}, "next_token": {fmt.Sprintf("%d.%s", evalIndex(t, f, e[4]), e[4])}}, want: e[4:]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, ids, token, body := f.get(t, tc.path, tc.idField, tc.query)
			must.Eq(t, http.StatusOK, status, must.Sprint(body))
			must.Eq(t, tc.want, ids)
			must.Eq(t, tc.wantToken, token)
		})
	}
}

func allocIndex(t *testing.T, f *listFixture, id string) uint64 {
	a, err := f.ta.Server().State().AllocByID(nil, id)
	must.NoError(t, err)
	return a.CreateIndex
}

func evalIndex(t *testing.T, f *listFixture, id string) uint64 {
	e, err := f.ta.Server().State().EvalByID(nil, id)
	must.NoError(t, err)
	return e.CreateIndex
}

// Every paginated list refuses a filter that does not parse with a 400 that carries the
// parser's error, and a malformed per_page with a 400 naming it.
func TestSecurity_ListBadFilterIs400(t *testing.T) {
	f := newListFixture(t)
	paths := []string{"/v1/jobs", "/v1/allocations", "/v1/evaluations", "/v1/nodes", "/v1/acl/tokens",
		"/v1/acl/policies", "/v1/acl/roles", "/v1/namespaces", "/v1/jobs/purged"}
	bad := []struct {
		name    string
		query   url.Values
		wantMsg string
	}{
		{name: "unparsable filter", query: url.Values{"filter": {`Status ==`}}, wantMsg: "failed to read filter expression: "},
		{name: "per_page not a number", query: url.Values{"per_page": {"ten"}}, wantMsg: "per_page"},
		{name: "per_page negative", query: url.Values{"per_page": {"-1"}}, wantMsg: "per_page"},
	}
	for _, path := range paths {
		for _, b := range bad {
			t.Run(path+" "+b.name, func(t *testing.T) {
				status, _, _, body := f.get(t, path, "", b.query)
				must.Eq(t, http.StatusBadRequest, status)
				must.StrContains(t, body, b.wantMsg)
			})
		}
	}
	t.Run("the filter cannot see a token's secret", func(t *testing.T) {
		status, _, _, body := f.get(t, "/v1/acl/tokens", "", url.Values{"filter": {`SecretID == "` + f.root + `"`}})
		must.Eq(t, http.StatusBadRequest, status)
		must.StrNotContains(t, body, f.root)
	})
}

// The official client's QueryOptions (Filter, PerPage, NextToken) drive our lists, and its
// QueryMeta carries the next token back.
func TestSecurity_OfficialClientPagesAndFilters(t *testing.T) {
	f := newListFixture(t)
	c := f.ta.Client(f.root)

	var seen []string
	q := &api.QueryOptions{PerPage: 2}
	for pages := 0; ; pages++ {
		must.Less(t, 4, pages)
		jobs, meta, err := c.Jobs().List(q)
		must.NoError(t, err)
		for _, j := range jobs {
			seen = append(seen, j.ID)
		}
		if meta.NextToken == "" {
			break
		}
		q.NextToken = meta.NextToken
	}
	must.Eq(t, []string{"a", "b", "c", "d", "e"}, seen)

	jobs, _, err := c.Jobs().List(&api.QueryOptions{Filter: `Status == "dead"`})
	must.NoError(t, err)
	must.Len(t, 1, jobs)
	must.Eq(t, "a", jobs[0].ID)

	allocs, meta, err := c.Allocations().List(&api.QueryOptions{Filter: `ClientStatus == "running"`, PerPage: 1})
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	must.Eq(t, f.allocs[0], allocs[0].ID)
	must.NotEq(t, "", meta.NextToken)
	allocs, meta, err = c.Allocations().List(&api.QueryOptions{Filter: `ClientStatus == "running"`, PerPage: 1, NextToken: meta.NextToken})
	must.NoError(t, err)
	must.Eq(t, f.allocs[2], allocs[0].ID)
	must.Eq(t, "", meta.NextToken)

	evals, _, err := c.Evaluations().List(&api.QueryOptions{Filter: `JobID == "d"`})
	must.NoError(t, err)
	must.Len(t, 1, evals)
	must.Eq(t, "d", evals[0].JobID)

	_, _, err = c.Jobs().List(&api.QueryOptions{Filter: `Status ==`})
	must.ErrorContains(t, err, "400")
}

// Every paginated list answers per_page with a page and X-Nomad-NextToken, and next_token
// resumes at the row the token names.
func TestSecurity_EveryPaginatedListSendsNextToken(t *testing.T) {
	f := newListFixture(t)
	c := f.ta.Client(f.root)
	for _, name := range []string{"p1", "p2"} {
		clientToken(t, f.ta, f.root, name, `namespace "default" { policy = "read" }`)
		_, _, err := c.ACLRoles().Create(&api.ACLRole{Name: "role-" + name, Policies: []*api.ACLRolePolicyLink{{Name: name}}}, nil)
		must.NoError(t, err)
	}
	_, err := c.Namespaces().Register(&api.Namespace{Name: "other"}, nil)
	must.NoError(t, err)
	for _, id := range []string{"c", "d"} {
		_, _, err := c.Jobs().Deregister(id, true, nil)
		must.NoError(t, err)
	}
	cases := []struct {
		path    string
		idField string
	}{
		{path: "/v1/jobs", idField: "ID"},
		{path: "/v1/allocations", idField: "ID"},
		{path: "/v1/evaluations", idField: "ID"},
		{path: "/v1/acl/tokens", idField: "AccessorID"},
		{path: "/v1/acl/policies", idField: "Name"},
		{path: "/v1/acl/roles", idField: "ID"},
		{path: "/v1/namespaces", idField: "Name"},
		{path: "/v1/jobs/purged", idField: "ID"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			status, all, token, body := f.get(t, tc.path, tc.idField, nil)
			must.Eq(t, http.StatusOK, status, must.Sprint(body))
			must.Eq(t, "", token)
			must.Greater(t, 1, len(all))

			status, first, token, _ := f.get(t, tc.path, tc.idField, url.Values{"per_page": {"1"}})
			must.Eq(t, http.StatusOK, status)
			must.Eq(t, all[:1], first)
			must.NotEq(t, "", token)
			must.StrHasSuffix(t, all[1], token)

			status, second, _, _ := f.get(t, tc.path, tc.idField, url.Values{"per_page": {"1"}, "next_token": {token}})
			must.Eq(t, http.StatusOK, status)
			must.Eq(t, all[1:2], second)
		})
	}
}
