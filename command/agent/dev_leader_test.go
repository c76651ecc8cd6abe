package agent

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
)

// TestDevAgent_NodeReadyWhenLeaderReported starts a -dev agent and, as a script would, reads
// /v1/status/leader until it names a leader: the agent's node must already be registered and
// ready then.
func TestDevAgent_NodeReadyWhenLeaderReported(t *testing.T) {
	cfg := DevConfig()
	cfg.BindAddr = "127.0.0.1"
	cfg.Ports.HTTP = 0
	cfg.LogLevel = "WARN"
	a, err := NewAgent(cfg, hclog.NewNullLogger())
	must.NoError(t, err)
	t.Cleanup(a.Shutdown)
	base := "http://" + a.HTTPAddr()
	get := func(path string, out any) {
		resp, err := http.Get(base + path)
		must.NoError(t, err)
		defer resp.Body.Close()
		must.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var leader string
		get("/v1/status/leader", &leader)
		if leader != "" {
			break
		}
		must.True(t, time.Now().Before(deadline), must.Sprint("no leader reported"))
		time.Sleep(10 * time.Millisecond)
	}
	var nodes []struct{ Status string }
	get("/v1/nodes", &nodes)
	must.SliceLen(t, 1, nodes)
	must.Eq(t, "ready", nodes[0].Status)
}
