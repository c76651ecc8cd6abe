package command

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestAllocSignalAndRestart(t *testing.T) {
	signalPath := "/v1/client/allocation/" + execAllocID + "/signal"
	restartPath := "/v1/client/allocation/" + execAllocID + "/restart"
	routes := map[string]route{
		"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
		"GET /v1/allocation/" + execAllocID: jsonBody(execAllocJSON),
		"PUT " + signalPath:                 jsonBody(`{}`),
		"PUT " + restartPath:                jsonBody(`{}`),
	}
	cases := []struct {
		name     string
		args     []string
		code     int
		stderr   string
		wantPath string
		wantBody string
	}{
		{name: "signal a task", args: []string{"alloc", "signal", "-s", "SIGHUP", "5a7c", "sleep"},
			wantPath: signalPath, wantBody: `{"Task":"sleep","Signal":"SIGHUP"}`},
		{name: "signal every task", args: []string{"alloc", "signal", "-s", "USR1", "5a7c"},
			wantPath: signalPath, wantBody: `{"Task":"","Signal":"USR1"}`},
		{name: "signal with -task", args: []string{"alloc", "signal", "-s", "HUP", "-task", "sleep", "5a7c"},
			wantPath: signalPath, wantBody: `{"Task":"sleep","Signal":"HUP"}`},
		{name: "signal needs -s", args: []string{"alloc", "signal", "5a7c"}, code: 1,
			stderr: "A signal is required: give one with -s, such as -s SIGHUP\n"},
		{name: "signal unknown task", args: []string{"alloc", "signal", "-s", "HUP", "5a7c", "nope"}, code: 1,
			stderr: "Task \"nope\" is not in allocation 5a7c0e36; its tasks: sleep\n"},
		{name: "signal task named twice", args: []string{"alloc", "signal", "-s", "HUP", "-task", "a", "5a7c", "b"}, code: 1,
			stderr: "The task is named twice: -task=a and b\n"},
		{name: "restart a task", args: []string{"alloc", "restart", "5a7c", "sleep"},
			wantPath: restartPath, wantBody: `{"TaskName":"sleep","AllTasks":false}`},
		{name: "restart every task", args: []string{"alloc", "restart", "-all-tasks", "5a7c"},
			wantPath: restartPath, wantBody: `{"TaskName":"","AllTasks":true}`},
		{name: "restart all with a task", args: []string{"alloc", "restart", "-all-tasks", "5a7c", "sleep"}, code: 1,
			stderr: "-all-tasks restarts every task: name none with it\n"},
		{name: "restart without allocation", args: []string{"alloc", "restart"}, code: 1,
			stderr: "This command takes one or two arguments: <allocation> [<task>]\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, routes)
			code, _, stderr := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, tc.code, code, must.Sprint(stderr))
			must.Eq(t, tc.stderr, stderr)
			if tc.wantPath == "" {
				must.SliceEmpty(t, fa.find("PUT", signalPath))
				must.SliceEmpty(t, fa.find("PUT", restartPath))
				return
			}
			reqs := fa.find("PUT", tc.wantPath)
			must.SliceLen(t, 1, reqs)
			must.Eq(t, tc.wantBody+"\n", reqs[0].Body)
			must.Eq(t, "prod", reqs[0].Query["namespace"][0])
		})
	}
}

func TestAllocSignal_Refused(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
		"GET /v1/allocation/" + execAllocID: jsonBody(execAllocJSON),
		"PUT /v1/client/allocation/" + execAllocID + "/signal": textError(403,
			`Permission denied: alloc-lifecycle capability required in namespace "prod"`),
	})
	code, _, stderr := runCLI(t, fa.srv.URL, "", "alloc", "signal", "-s", "HUP", "5a7c")
	must.Eq(t, 1, code)
	must.StrContains(t, stderr, "Error signalling allocation")
	must.StrContains(t, stderr, "alloc-lifecycle capability required")
}

func TestAllocStop(t *testing.T) {
	stopPath := "/v1/allocation/" + execAllocID + "/stop"
	cases := []struct {
		name      string
		args      []string
		code      int
		stdout    string
		stderr    string
		wantQuery map[string]string
	}{
		{name: "detached", args: []string{"alloc", "stop", "-detach", "5a7c"}, stdout: "e1\n",
			wantQuery: map[string]string{"namespace": "prod"}},
		{name: "no shutdown delay", args: []string{"alloc", "stop", "-detach", "-no-shutdown-delay", "5a7c"}, stdout: "e1\n",
			wantQuery: map[string]string{"namespace": "prod", "no_shutdown_delay": "true"}},
		{name: "no allocation", args: []string{"alloc", "stop"}, code: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
				"GET /v1/allocation/" + execAllocID: jsonBody(execAllocJSON),
				"PUT " + stopPath:                   jsonBody(`{"EvalID":"e1","Index":7}`),
			})
			code, stdout, stderr := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, tc.code, code, must.Sprint(stderr))
			if tc.code != 0 {
				must.SliceEmpty(t, fa.find("PUT", stopPath))
				return
			}
			must.Eq(t, tc.stdout, stdout)
			reqs := fa.find("PUT", stopPath)
			must.SliceLen(t, 1, reqs)
			for k, v := range tc.wantQuery {
				must.Eq(t, v, reqs[0].Query[k][0])
			}
			if _, ok := tc.wantQuery["no_shutdown_delay"]; !ok {
				must.MapNotContainsKey(t, reqs[0].Query, "no_shutdown_delay")
			}
		})
	}
}
