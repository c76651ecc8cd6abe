package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// filesUnder lists every path under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	must.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	}))
	return out
}

// A task or group name that would lead out of the allocation directory is refused at the
// door, with a 400 naming the field, and the client creates nothing outside its data dir.
func TestSecurity_TraversalNamesRefused(t *testing.T) {
	base := t.TempDir()
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Client.AllocDir = filepath.Join(base, "data", "alloc")
		c.Client.StateDir = filepath.Join(base, "data", "client")
	})
	job := func(group, task string) string {
		return `{"Job":{"ID":"evil","Type":"batch","Datacenters":["dc1"],"TaskGroups":[{"Name":"` + group + `","Count":1,` +
			`"Tasks":[{"Name":"` + task + `","Driver":"raw_exec","Config":{"command":"/bin/true"}}]}]}}`
	}
	cases := []struct {
		name     string
		body     string
		wantBody string
	}{
		{name: "traversal task name", body: job("g", "../../../../../../../../tmp/x"),
			wantBody: `group "g": task "../../../../../../../../tmp/x": name must not contain "/"`},
		{name: "relative escape", body: job("g", "../../../escaped"), wantBody: `task "../../../escaped": name must not contain "/"`},
		{name: "dot dot task", body: job("g", ".."), wantBody: `task "..": name must not be "." or ".."`},
		{name: "NUL in task", body: job("g", `a\u0000b`), wantBody: "must not contain a null character"},
		{name: "traversal group name", body: job("../../escaped", "t"), wantBody: `group "../../escaped": name must not contain "/"`},
		{name: "long task name", body: job("g", strings.Repeat("a", 129)), wantBody: "must be at most 128 characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := filesUnder(t, base)
			res := doHTTP(t, ta, "PUT", "/v1/jobs", strings.NewReader(tc.body), nil)
			must.Eq(t, 400, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantBody)
			job, err := ta.Server().State().JobByID(nil, "default", "evil")
			must.NoError(t, err)
			must.Nil(t, job)
			must.Eq(t, before, filesUnder(t, base))
		})
	}
}
