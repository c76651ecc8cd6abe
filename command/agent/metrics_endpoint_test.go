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
