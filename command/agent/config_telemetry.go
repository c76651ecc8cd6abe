package agent

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// TelemetryConfig is the telemetry block. Metrics are process-wide (see setupMetrics), so
// the first agent started in a process fixes the collection interval.
type TelemetryConfig struct {
	// PrometheusMetrics serves GET /v1/metrics?format=prometheus.
	PrometheusMetrics bool
	// CollectionInterval is how long one in-memory summary interval lasts.
	CollectionInterval time.Duration
	// PublishNodeMetrics and PublishAllocationMetrics add the client's host and per-task
	// resource gauges, as upstream (both off by default).
	PublishNodeMetrics       bool
	PublishAllocationMetrics bool
}

// fileTelemetry decodes the keys we honour. Upstream's sink settings (statsd, statsite,
// datadog, circonus and the like) stay accepted, each with a warning, and have no effect: no
// external sink is built in.
type fileTelemetry struct {
	PrometheusMetrics        *bool          `hcl:"prometheus_metrics,optional"`
	CollectionInterval       hcl.Expression `hcl:"collection_interval,optional"`
	PublishNodeMetrics       *bool          `hcl:"publish_node_metrics,optional"`
	PublishAllocationMetrics *bool          `hcl:"publish_allocation_metrics,optional"`
	Rest                     hcl.Body       `hcl:",remain"`
}

func assignTelemetry(a *assigner, t *fileTelemetry) {
	if t == nil {
		return
	}
	assign(a, t.PrometheusMetrics, func(c *Config) *bool { return &ensure(&c.Telemetry).PrometheusMetrics })
	assign(a, t.PublishNodeMetrics, func(c *Config) *bool { return &ensure(&c.Telemetry).PublishNodeMetrics })
	assign(a, t.PublishAllocationMetrics, func(c *Config) *bool { return &ensure(&c.Telemetry).PublishAllocationMetrics })
	assignDuration(a, t.CollectionInterval, "collection_interval",
		func(c *Config) *time.Duration { return &ensure(&c.Telemetry).CollectionInterval })
	warnRemain(a, t.Rest, t, "telemetry", "this build serves its metrics only at /v1/metrics, with no external sinks or filters")
}

// telemetry returns the telemetry block, or its zero value when none was written.
func (c *Config) telemetry() *TelemetryConfig {
	return valueOr(c.Telemetry, &TelemetryConfig{})
}
