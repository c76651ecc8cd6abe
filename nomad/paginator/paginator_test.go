package paginator

import (
	"strings"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

type row struct {
	Namespace   string
	ID          string
	Status      string
	CreateIndex uint64
	Meta        map[string]string `json:",omitempty"`
	Secret      string            `json:"-"`
}

var rows = []*row{
	{Namespace: "default", ID: "b", Status: "running", CreateIndex: 30, Meta: map[string]string{"team": "x"}},
	{Namespace: "a-b", ID: "c", Status: "dead", CreateIndex: 10},
	{Namespace: "default", ID: "a", Status: "running", CreateIndex: 20},
	{Namespace: "a", ID: "z", Status: "pending", CreateIndex: 9, Secret: "s3cr3t"},
	{Namespace: "default", ID: "c", Status: "dead", CreateIndex: 100},
}

var (
	byNamespaceID = Order[*row]{Key: func(r *row) Key { return ByNamespaceID(r.Namespace, r.ID) }}
	byIndex       = Order[*row]{Key: func(r *row) Key { return ByCreateIndexID(r.CreateIndex, r.ID) }}
	newestFirst   = Order[*row]{Descending: true, Key: byIndex.Key}
)

func ids(rs []*row) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Namespace+"/"+r.ID)
	}
	return out
}

func TestPage(t *testing.T) {
	cases := []struct {
		name      string
		order     Order[*row]
		opts      structs.QueryOptions
		visible   func(*row) bool
		want      []string
		wantToken string
	}{
		{name: "everything in order", order: byNamespaceID,
			// Tuple order: namespace "a" sorts before "a-b", though "a.z" > "a-b.c" as strings.
			want: []string{"a/z", "a-b/c", "default/a", "default/b", "default/c"}},
		{name: "first page", order: byNamespaceID, opts: structs.QueryOptions{PerPage: 2},
			want: []string{"a/z", "a-b/c"}, wantToken: "default.a"},
		{name: "second page from the token", order: byNamespaceID, opts: structs.QueryOptions{PerPage: 2, NextToken: "default.a"},
			want: []string{"default/a", "default/b"}, wantToken: "default.c"},
		{name: "last page has no token", order: byNamespaceID, opts: structs.QueryOptions{PerPage: 2, NextToken: "default.c"},
			want: []string{"default/c"}},
		{name: "a page exactly full has no token", order: byNamespaceID, opts: structs.QueryOptions{PerPage: 5},
			want: []string{"a/z", "a-b/c", "default/a", "default/b", "default/c"}},
		{name: "token of a removed row resumes after it", order: byNamespaceID, opts: structs.QueryOptions{NextToken: "default.aa"},
			want: []string{"default/b", "default/c"}},
		{name: "reverse", order: byNamespaceID, opts: structs.QueryOptions{Reverse: true, PerPage: 2},
			want: []string{"default/c", "default/b"}, wantToken: "default.a"},
		{name: "reverse from the token", order: byNamespaceID, opts: structs.QueryOptions{Reverse: true, NextToken: "default.a"},
			want: []string{"default/a", "a-b/c", "a/z"}},
		{name: "by create index numerically", order: byIndex, opts: structs.QueryOptions{PerPage: 3},
			want: []string{"a/z", "a-b/c", "default/a"}, wantToken: "30.b"},
		{name: "create index token", order: byIndex, opts: structs.QueryOptions{NextToken: "30.b"},
			want: []string{"default/b", "default/c"}},
		{name: "descending by default", order: newestFirst, opts: structs.QueryOptions{PerPage: 1},
			want: []string{"default/c"}, wantToken: "30.b"},
		{name: "descending reversed is ascending", order: newestFirst, opts: structs.QueryOptions{PerPage: 1, Reverse: true},
			want: []string{"a/z"}, wantToken: "10.c"},
		{name: "filter on the wire shape", order: byNamespaceID, opts: structs.QueryOptions{Filter: `Status == "running"`},
			want: []string{"default/a", "default/b"}},
		{name: "filter with pages counts only matches", order: byNamespaceID, opts: structs.QueryOptions{Filter: `Status != "running"`, PerPage: 2},
			want: []string{"a/z", "a-b/c"}, wantToken: "default.c"},
		{name: "filter on an omitted map tests it as empty", order: byNamespaceID, opts: structs.QueryOptions{Filter: `Meta.team == "x"`},
			want: []string{"default/b"}},
		{name: "filter on a number", order: byNamespaceID, opts: structs.QueryOptions{Filter: `CreateIndex == 100`},
			want: []string{"default/c"}},
		{name: "filter sees no field the wire leaves out", order: byNamespaceID, opts: structs.QueryOptions{Filter: `Secret is empty`},
			wantToken: "error"},
		{name: "invisible rows are skipped and not counted", order: byNamespaceID, opts: structs.QueryOptions{PerPage: 2},
			visible: func(r *row) bool { return r.Namespace == "default" },
			want:    []string{"default/a", "default/b"}, wantToken: "default.c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, token, err := Page(rows, tc.opts, tc.order, tc.visible, func(r *row) (*row, error) { return r, nil })
			if tc.wantToken == "error" {
				must.Error(t, err)
				must.Eq(t, 400, structs.ErrorCode(err))
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, ids(got))
			must.Eq(t, tc.wantToken, token)
		})
	}
}

func TestPage_BadInput(t *testing.T) {
	cases := []struct {
		name    string
		order   Order[*row]
		opts    structs.QueryOptions
		wantMsg string
	}{
		{name: "filter that does not parse", order: byNamespaceID, opts: structs.QueryOptions{Filter: `Status ==`},
			wantMsg: "failed to read filter expression"},
		{name: "filter on an unknown field", order: byNamespaceID, opts: structs.QueryOptions{Filter: `Nope == "x"`},
			wantMsg: "Nope"},
		{name: "create index token that is not a number", order: byIndex, opts: structs.QueryOptions{NextToken: "abc.x"},
			wantMsg: "next_token"},
		{name: "negative per_page", order: byIndex, opts: structs.QueryOptions{PerPage: -1}, wantMsg: "per_page"},
		{name: "filter with too many clauses", order: byIndex,
			opts:    structs.QueryOptions{Filter: strings.Repeat(`Status == "x" or `, 1000) + `Status == "y"`},
			wantMsg: "failed to read filter expression"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Page(rows, tc.opts, tc.order, nil, func(r *row) (*row, error) { return r, nil })
			must.Error(t, err)
			must.Eq(t, 400, structs.ErrorCode(err))
			must.StrContains(t, err.Error(), tc.wantMsg)
		})
	}
}

// A filter of a realistic size stays under the bound.
func TestNewFilter_RealisticSizeFits(t *testing.T) {
	_, err := NewFilter(strings.Repeat(`Status == "x" or `, 100) + `Meta.team == "y"`)
	must.NoError(t, err)
}
