package agent

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixClientAllocControlEndpoints() []matrixEndpoint {
	lifecycle := []string{rowWrite, rowManagement}
	return []matrixEndpoint{
		{name: "alloc signal", method: "PUT", path: "/v1/client/allocation/no-such-alloc/signal",
			body: `{"Task":"web","Signal":"SIGHUP"}`, allow: lifecycle, okStatus: 404},
		{name: "alloc signal post", method: "POST", path: "/v1/client/allocation/no-such-alloc/signal",
			body: `{"Signal":"SIGHUP"}`, allow: lifecycle, okStatus: 404},
		{name: "alloc restart", method: "PUT", path: "/v1/client/allocation/no-such-alloc/restart",
			body: `{"TaskName":"web"}`, allow: lifecycle, okStatus: 404},
		{name: "alloc restart post", method: "POST", path: "/v1/client/allocation/no-such-alloc/restart",
			allow: lifecycle, okStatus: 404},
		{name: "alloc stats", method: "GET", path: "/v1/client/allocation/no-such-alloc/stats", allow: allowReadJob, okStatus: 404},
		{name: "alloc checks", method: "GET", path: "/v1/client/allocation/no-such-alloc/checks", allow: allowReadJob, okStatus: 404},
		{name: "client stats", method: "GET", path: "/v1/client/stats", allow: allowNodeRead, okStatus: 400},
	}
}

func TestACLMatrix_ClientAllocControl(t *testing.T) {
	runACLMatrix(t, matrixClientAllocControlEndpoints(), matrixRows)
}

// trapJob runs a shell that writes "hup" to its task directory on each SIGHUP.
func trapJob(id string) *api.Job {
	return shJob(id, "service", `echo started >> "$NOMAD_TASK_DIR/starts"
trap 'echo hup >> "$NOMAD_TASK_DIR/signals"' HUP
while true; do sleep 0.05; done`)
}

func readTaskFile(t *testing.T, ta *TestAgent, alloc *api.Allocation, name string) string {
	t.Helper()
	dir := ta.Agent.Client().TaskDir(alloc.ID, "sh")
	raw, _ := os.ReadFile(filepath.Join(dir, "local", name))
	return string(raw)
}

// TestClientAllocControl_OfficialClient drives signal, restart and the stats through the
// official client.
func TestClientAllocControl_OfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Plugins = append(c.Plugins, &PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	})
	c := ta.Client("")
	alloc := runningAlloc(t, c, trapJob("trap"))
	eventually(t, 10*time.Second, "the trap set", func() (bool, string) {
		s := readTaskFile(t, ta, alloc, "starts")
		return strings.Contains(s, "started"), s
	})

	t.Run("signal", func(t *testing.T) {
		must.NoError(t, c.Allocations().Signal(alloc, nil, "sh", "SIGHUP"))
		eventually(t, 10*time.Second, "the signal", func() (bool, string) {
			s := readTaskFile(t, ta, alloc, "signals")
			return strings.Count(s, "hup") == 1, s
		})
		err := c.Allocations().Signal(alloc, nil, "sh", "SIGNOPE")
		status, body := responseError(t, err)
		must.Eq(t, 400, status)
		must.StrContains(t, body, "invalid Signal")
		err = c.Allocations().Signal(alloc, nil, "nope", "SIGHUP")
		status, _ = responseError(t, err)
		must.Eq(t, 404, status)
	})
	t.Run("stats", func(t *testing.T) {
		usage, err := c.Allocations().Stats(alloc, nil)
		must.NoError(t, err)
		must.MapContainsKey(t, usage.Tasks, "sh")
		must.Positive(t, usage.Tasks["sh"].ResourceUsage.MemoryStats.RSS)
		must.MapNotEmpty(t, usage.Tasks["sh"].Pids)
		must.Positive(t, usage.Timestamp)

		host, err := c.Nodes().Stats(ta.Agent.Client().NodeID(), nil)
		must.NoError(t, err)
		must.Positive(t, host.Memory.Total)
		must.SliceNotEmpty(t, host.CPU)
		must.Positive(t, host.Uptime)
		must.NotNil(t, host.AllocDirStats)
		must.Positive(t, host.AllocDirStats.Size)
	})
	t.Run("restart", func(t *testing.T) {
		must.NoError(t, c.Allocations().Restart(alloc, "sh", nil))
		eventually(t, 20*time.Second, "the task restarted", func() (bool, string) {
			a, _, err := c.Allocations().Info(alloc.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			ts := a.TaskStates["sh"]
			return ts != nil && ts.Restarts == 1 && ts.State == "running" && a.ClientStatus == "running",
				a.ClientStatus
		})
		eventually(t, 10*time.Second, "the second start", func() (bool, string) {
			s := readTaskFile(t, ta, alloc, "starts")
			return strings.Count(s, "started") == 2, s
		})
	})
	t.Run("refused requests", func(t *testing.T) {
		cases := []struct {
			name       string
			method     string
			path       string
			body       string
			wantStatus int
			wantBody   string
		}{
			{name: "signal without a body", method: "PUT", path: "/signal", wantStatus: 400, wantBody: "Request body is empty"},
			{name: "signal without a signal", method: "PUT", path: "/signal", body: `{"Task":"sh"}`, wantStatus: 400, wantBody: "missing Signal"},
			{name: "signal with GET", method: "GET", path: "/signal", wantStatus: 405},
			{name: "restart with both", method: "PUT", path: "/restart", body: `{"TaskName":"sh","AllTasks":true}`, wantStatus: 400, wantBody: "exclusive"},
			{name: "stats with PUT", method: "PUT", path: "/stats", wantStatus: 405},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var body io.Reader
				if tc.body != "" {
					body = strings.NewReader(tc.body)
				}
				res := doHTTP(t, ta, tc.method, "/v1/client/allocation/"+alloc.ID+tc.path, body, nil)
				must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
				must.StrContains(t, res.body, tc.wantBody)
			})
		}
	})
}

// TestClientAllocControl_ThroughServer: signal and stats of an allocation on a client-only
// agent reach it through the server, over the client's own connection.
func TestClientAllocControl_ThroughServer(t *testing.T) {
	ta, rpcAddr := newRPCServerAgent(t, nil)
	ca := newClientOnlyAgent(t, rpcAddr)
	c := ta.Client("")
	alloc := runningAlloc(t, c, trapJob("remote"))
	must.Eq(t, ca.Client().NodeID(), alloc.NodeID)
	dir := ca.Client().TaskDir(alloc.ID, "sh")
	eventually(t, 10*time.Second, "the trap set", func() (bool, string) {
		raw, _ := os.ReadFile(filepath.Join(dir, "local", "starts"))
		return strings.Contains(string(raw), "started"), string(raw)
	})
	must.NoError(t, c.Allocations().Signal(alloc, nil, "sh", "HUP"))
	eventually(t, 10*time.Second, "the signal", func() (bool, string) {
		raw, _ := os.ReadFile(filepath.Join(dir, "local", "signals"))
		return strings.Contains(string(raw), "hup"), string(raw)
	})
	usage, err := c.Allocations().Stats(alloc, nil)
	must.NoError(t, err)
	must.Positive(t, usage.Tasks["sh"].ResourceUsage.MemoryStats.RSS)
	host, err := c.Nodes().Stats(ca.Client().NodeID(), nil)
	must.NoError(t, err)
	must.Positive(t, host.Memory.Total)
	err = c.Allocations().Signal(alloc, nil, "nope", "HUP")
	status, _ := responseError(t, err)
	must.Eq(t, http.StatusNotFound, status)
}
