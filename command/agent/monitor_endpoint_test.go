package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixMonitorEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{
			name: "agent monitor", method: "GET", path: "/v1/agent/monitor?log_level=debug", stream: true,
			allow: []string{rowAgentRead, rowAgentWrite, rowManagement},
		},
	}
}

func TestACLMatrix_Monitor(t *testing.T) {
	runACLMatrix(t, matrixMonitorEndpoints(), matrixRows)
}

// TestAgentMonitor_ThroughOfficialClient follows the agent's debug log, locally and through
// the node ID of its own client, until a request's debug line shows up.
func TestAgentMonitor_ThroughOfficialClient(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) { c.LogLevel = "ERROR" })
	c := ta.Client("")
	cases := []struct {
		name   string
		params map[string]string
	}{
		{name: "local", params: map[string]string{"log_level": "debug"}},
		{name: "own node", params: map[string]string{"log_level": "debug", "node_id": ta.Agent.Client().NodeID()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stop := make(chan struct{})
			defer close(stop)
			frames, errs := c.Agent().Monitor(stop, &api.QueryOptions{Params: tc.params})
			// The sink is in place once the response started; this request logs at debug.
			_, err := c.Agent().Region()
			must.NoError(t, err)
			deadline := time.After(10 * time.Second)
			for {
				select {
				case f := <-frames:
					if f != nil && strings.Contains(string(f.Data), "[DEBUG]") {
						return
					}
				case err := <-errs:
					t.Fatalf("monitor: %v", err)
				case <-deadline:
					t.Fatal("no debug line arrived")
				}
			}
		})
	}

	_, errs := c.Agent().Monitor(nil, &api.QueryOptions{Params: map[string]string{"log_level": "loud"}})
	err := <-errs
	must.ErrorContains(t, err, "400")
	_, errs = c.Agent().Monitor(nil, &api.QueryOptions{Params: map[string]string{"node_id": "no-such-node"}})
	err = <-errs
	must.ErrorContains(t, err, "404")
}
