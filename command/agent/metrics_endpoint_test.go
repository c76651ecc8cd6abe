package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// The official client's harness waits for /v1/metrics to answer 200, and its metrics test
// wants at least one gauge, counter and sample in the summary.
func TestMetricsEndpoint_Summary(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")

	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		summary, _, err := c.Operator().MetricsSummary(nil)
		if err != nil {
			return err
		}
		names := map[string]bool{}
		for _, g := range summary.Gauges {
			names[g.Name] = true
		}
		if summary.Timestamp == "" || len(summary.Counters) == 0 || len(summary.Samples) == 0 {
			return fmt.Errorf("summary incomplete: %d gauges, %d counters, %d samples",
				len(summary.Gauges), len(summary.Counters), len(summary.Samples))
		}
		if !names["nomad.runtime.num_goroutines"] {
			return fmt.Errorf("no nomad.runtime.num_goroutines gauge in %v", names)
		}
		return nil
	}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
}

func TestMetricsEndpoint_Prometheus(t *testing.T) {
	cases := []struct {
		name       string
		prometheus bool
		query      string
		wantStatus int
		wantBody   string
	}{
		{name: "enabled", prometheus: true, query: "?format=prometheus", wantStatus: 200, wantBody: "# HELP"},
		{name: "disabled", prometheus: false, query: "?format=prometheus", wantStatus: 400, wantBody: "prometheus_metrics"},
		{name: "unknown format", prometheus: true, query: "?format=xml", wantStatus: 400, wantBody: "format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ta := NewTestAgent(t, func(c *Config) {
				c.Telemetry = &TelemetryConfig{PrometheusMetrics: tc.prometheus}
			})
			res := doHTTP(t, ta, "GET", "/v1/metrics"+tc.query, nil, nil)
			must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantBody)
		})
	}
}

func TestMetricsEndpoint_PrometheusThroughClient(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) { c.Telemetry = &TelemetryConfig{PrometheusMetrics: true} })
	out, err := ta.Client("").Operator().Metrics(&api.QueryOptions{Params: map[string]string{"format": "prometheus"}})
	must.NoError(t, err)
	must.True(t, strings.Contains(string(out), "# HELP"))
}

func TestConfig_Telemetry(t *testing.T) {
	loaded, err := loadConfigString(t, "t.hcl", `telemetry {
  prometheus_metrics = true
  collection_interval = "5s"
  disable_hostname = true
}`)
	must.NoError(t, err)
	got := DefaultConfig().Merge(loaded)
	must.True(t, got.Telemetry.PrometheusMetrics)
	must.Eq(t, 5*time.Second, got.Telemetry.CollectionInterval)

	_, err = loadConfigString(t, "t.hcl", `telemetry { collection_interval = "soon" }`)
	must.ErrorContains(t, err, "collection_interval")
}

// TestMetricsEndpoint_UpstreamNames runs a job and finds, under upstream's names, what a
// dashboard built for upstream reads: RPC counters, FSM apply timers, the leader's gauges
// (heartbeats, job status, each group's summary labelled by job) and the client's allocation
// and host gauges labelled by node.
func TestMetricsEndpoint_UpstreamNames(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Telemetry = &TelemetryConfig{PublishNodeMetrics: true, PublishAllocationMetrics: true}
	})
	c := ta.Client("")
	_, _, err := c.Jobs().Register(testJob("metrics-web"), nil)
	must.NoError(t, err)
	allocsIn(t, c, "metrics-web", map[string]int{"running": 1})
	nodeID := ta.Agent.Client().NodeID()

	// The summary is of the last complete interval, and what it holds depends on what
	// happened then: each try does a write and a read, and what was seen accumulates.
	seen := map[string]bool{}
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		if _, _, err := c.Jobs().Register(testJob("metrics-web"), nil); err != nil {
			return err
		}
		if _, _, err := c.Jobs().Info("metrics-web", nil); err != nil {
			return err
		}
		summary, _, err := c.Operator().MetricsSummary(nil)
		if err != nil {
			return err
		}
		for _, g := range summary.Gauges {
			seen[g.Name] = true
			switch {
			case g.Name == "nomad.nomad.job_summary.running" && g.DisplayLabels["job"] == "metrics-web" && g.DisplayLabels["task_group"] == "web":
				seen["job_summary.running=1"] = seen["job_summary.running=1"] || g.Value == 1
			case g.Name == "nomad.client.allocations.running" && g.DisplayLabels["node_id"] == nodeID:
				seen["client.allocations.running>=1"] = seen["client.allocations.running>=1"] || g.Value >= 1
			case g.Name == "nomad.client.allocs.memory.rss" && g.DisplayLabels["job"] == "metrics-web":
				seen["allocs.memory.rss"] = true
			}
		}
		for _, m := range summary.Counters {
			seen[m.Name] = true
		}
		for _, m := range summary.Samples {
			seen[m.Name] = true
		}
		for _, want := range []string{
			"nomad.nomad.rpc.request", "nomad.nomad.rpc.query", "nomad.nomad.fsm.register_job",
			"nomad.nomad.fsm.apply_plan_results", "nomad.nomad.heartbeat.active", "nomad.nomad.job_status.running",
			"job_summary.running=1", "client.allocations.running>=1", "nomad.client.host.memory.total",
			"nomad.client.uptime", "allocs.memory.rss",
		} {
			if !seen[want] {
				return fmt.Errorf("no %s yet", want)
			}
		}
		return nil
	}), wait.Timeout(45*time.Second), wait.Gap(time.Second)))
}
