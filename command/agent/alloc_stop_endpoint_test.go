package agent

import (
	"io"
	"net/http"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad/nomadtest"
	"github.com/nomadfork/nomad/structs"
	"testing"

	"github.com/shoenig/test/must"
)

func matrixAllocStopEndpoints() []matrixEndpoint {
	lifecycle := []string{rowWrite, rowManagement}
	return []matrixEndpoint{
		{name: "alloc stop", method: "PUT", path: "/v1/allocation/no-such-alloc/stop", allow: lifecycle, okStatus: 404},
		{name: "alloc stop post", method: "POST", path: "/v1/allocation/no-such-alloc/stop", allow: lifecycle, okStatus: 404},
	}
}

func TestACLMatrix_AllocStop(t *testing.T) {
	runACLMatrix(t, matrixAllocStopEndpoints(), matrixRows)
}

// TestAllocStop_Replaces: an allocation stopped through the official client is marked to
// migrate, its task is killed, and the scheduler places a replacement with the same name.
func TestAllocStop_Replaces(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Plugins = append(c.Plugins, &PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	})
	c := ta.Client("")
	alloc := runningAlloc(t, c, testJob("web"))
	pid := ta.Agent.Client().TaskPID(alloc.ID, "sleep")
	must.Positive(t, pid)

	resp, err := c.Allocations().Stop(alloc, &api.QueryOptions{Params: map[string]string{"no_shutdown_delay": "true", "reschedule": "true"}})
	must.NoError(t, err)
	must.NotEq(t, "", resp.EvalID)
	must.Positive(t, resp.LastIndex)
	eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
	must.NoError(t, err)
	must.Eq(t, "alloc-stop", eval.TriggeredBy)
	must.Eq(t, "web", eval.JobID)

	allocs := allocsIn(t, c, "web", map[string]int{"complete": 1, "running": 1})
	for _, a := range allocs {
		if a.ID == alloc.ID {
			must.Eq(t, "stop", a.DesiredStatus)
			full, _, err := c.Allocations().Info(a.ID, nil)
			must.NoError(t, err)
			must.True(t, full.DesiredTransition.ShouldMigrate())
			must.True(t, full.DesiredTransition.ShouldIgnoreShutdownDelay())
			must.True(t, full.DesiredTransition.ShouldReschedule())
			continue
		}
		must.Eq(t, alloc.Name, a.Name, must.Sprint("the replacement keeps the name"))
	}
	processGone(t, pid)

	t.Run("refused", func(t *testing.T) {
		cases := []struct {
			name       string
			path       string
			wantStatus int
			wantBody   string
		}{
			{name: "unknown allocation", path: "/v1/allocation/6f1ad1d4-0000-4d86-9f2a-6c1f5a1c0a01/stop", wantStatus: 404, wantBody: "alloc not found"},
			{name: "bad no_shutdown_delay", path: "/v1/allocation/" + alloc.ID + "/stop?no_shutdown_delay=maybe", wantStatus: 400, wantBody: "no_shutdown_delay"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				res := doHTTP(t, ta, http.MethodPut, tc.path, nil, nil)
				must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
				must.StrContains(t, res.body, tc.wantBody)
			})
		}
		res := doHTTP(t, ta, http.MethodGet, "/v1/allocation/"+alloc.ID+"/stop", nil, nil)
		must.Eq(t, http.StatusMethodNotAllowed, res.status)
	})
}

// TestSecurity_AllocLifecycleNamesAllocNamespace: a caller with alloc-lifecycle in the
// namespace it asks in, but not in the allocation's, is refused with a 403 naming the
// allocation's namespace, and the refusal changes nothing.
func TestSecurity_AllocLifecycleNamesAllocNamespace(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	rc := ta.Client(root)
	_, err := rc.Namespaces().Register(&api.Namespace{Name: "other"}, nil)
	must.NoError(t, err)
	job := testJob("elsewhere")
	job.Namespace = new("other")
	_, _, err = rc.Jobs().Register(job, nil)
	must.NoError(t, err)
	stored, err := ta.Server().State().JobByID(nil, "other", "elsewhere")
	must.NoError(t, err)
	alloc := &structs.Allocation{ID: "6f1ad1d4-6bd4-4d86-9f2a-6c1f5a1c0a02", Name: "elsewhere.web[0]", TaskGroup: "web"}
	nomadtest.PlaceAllocs(t, ta.Server(), stored, alloc)

	writer := clientToken(t, ta, root, "default-writer", `namespace "default" { policy = "write" }`)
	header := http.Header{"X-Nomad-Token": {writer.SecretID}}
	cases := []struct {
		name   string
		method string
		path   string
		body   string
	}{
		{name: "stop", method: http.MethodPut, path: "/v1/allocation/" + alloc.ID + "/stop"},
		{name: "signal", method: http.MethodPut, path: "/v1/client/allocation/" + alloc.ID + "/signal", body: `{"Signal":"SIGHUP"}`},
		{name: "restart", method: http.MethodPut, path: "/v1/client/allocation/" + alloc.ID + "/restart", body: `{}`},
		{name: "stats", method: http.MethodGet, path: "/v1/client/allocation/" + alloc.ID + "/stats"},
		{name: "checks", method: http.MethodGet, path: "/v1/client/allocation/" + alloc.ID + "/checks"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ta.Server().State().Index("allocs")
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			res := doHTTP(t, ta, tc.method, tc.path, body, header)
			must.Eq(t, http.StatusForbidden, res.status)
			must.StrHasPrefix(t, "Permission denied", res.body)
			must.StrContains(t, res.body, `namespace "other"`)
			must.Eq(t, before, ta.Server().State().Index("allocs"))
		})
	}
}
