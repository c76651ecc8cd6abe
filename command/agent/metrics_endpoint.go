package agent

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	metricsprom "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nomadfork/nomad/structs"
)

// Metrics are process-wide: go-metrics keeps one global registry that Raft, the Go runtime
// collector and our own code emit into, so the sinks behind it are created once per process
// and every agent in it (one in the binary, several in tests) serves the same figures.
//
// The in-memory sink keeps rolling intervals for GET /v1/metrics, whose JSON is go-metrics'
// own summary (Timestamp, Gauges, Points, Counters, Samples), the shape the official client
// decodes. The Prometheus sink is added the first time an agent with
// telemetry.prometheus_metrics starts.
var (
	metricsOnce sync.Once
	inmemSink   *metrics.InmemSink
	promSink    lazySink
)

// metricsIntervalDefault and metricsRetain follow upstream's telemetry defaults: figures
// summarised per 10s interval, the last minute kept.
const (
	metricsIntervalDefault = 10 * time.Second
	metricsRetain          = time.Minute
)

// setupMetrics starts the process's metrics once, then adds the Prometheus sink when t asks
// for it. It returns the in-memory sink the endpoint reads.
func setupMetrics(t *TelemetryConfig) *metrics.InmemSink {
	t = valueOr(t, &TelemetryConfig{})
	metricsOnce.Do(func() {
		interval := t.CollectionInterval
		if interval <= 0 {
			interval = metricsIntervalDefault
		}
		inmemSink = metrics.NewInmemSink(interval, metricsRetain)
		conf := metrics.DefaultConfig("nomad")
		// Gauge names stay "nomad.runtime.…" rather than "nomad.<host>.runtime.…": the
		// node is known from where the figures were scraped.
		conf.EnableHostname = false
		conf.EnableHostnameLabel = false
		conf.EnableRuntimeMetrics = true
		_, _ = metrics.NewGlobal(conf, metrics.FanoutSink{inmemSink, &promSink})
	})
	if t.PrometheusMetrics {
		promSink.enable()
	}
	return inmemSink
}

// lazySink forwards to a Prometheus sink once one is enabled and drops figures before that.
// The go-metrics global cannot change its sinks after creation, hence the indirection.
type lazySink struct {
	once sync.Once
	sink atomic.Pointer[metricsprom.PrometheusSink]
}

func (l *lazySink) enable() {
	l.once.Do(func() {
		s, err := metricsprom.NewPrometheusSinkFrom(metricsprom.PrometheusOpts{
			Expiration: time.Minute,
			Registerer: prometheus.DefaultRegisterer,
		})
		if err == nil {
			l.sink.Store(s)
		}
	})
}

func (l *lazySink) enabled() bool { return l.sink.Load() != nil }

func (l *lazySink) SetGauge(key []string, val float32) { l.SetGaugeWithLabels(key, val, nil) }
func (l *lazySink) SetGaugeWithLabels(key []string, val float32, labels []metrics.Label) {
	if s := l.sink.Load(); s != nil {
		s.SetGaugeWithLabels(key, val, labels)
	}
}
func (l *lazySink) SetPrecisionGauge(key []string, val float64) {
	l.SetPrecisionGaugeWithLabels(key, val, nil)
}
func (l *lazySink) SetPrecisionGaugeWithLabels(key []string, val float64, labels []metrics.Label) {
	if s := l.sink.Load(); s != nil {
		s.SetPrecisionGaugeWithLabels(key, val, labels)
	}
}
func (l *lazySink) EmitKey(key []string, val float32) {
	if s := l.sink.Load(); s != nil {
		s.EmitKey(key, val)
	}
}
func (l *lazySink) IncrCounter(key []string, val float32) { l.IncrCounterWithLabels(key, val, nil) }
func (l *lazySink) IncrCounterWithLabels(key []string, val float32, labels []metrics.Label) {
	if s := l.sink.Load(); s != nil {
		s.IncrCounterWithLabels(key, val, labels)
	}
}
func (l *lazySink) AddSample(key []string, val float32) { l.AddSampleWithLabels(key, val, nil) }
func (l *lazySink) AddSampleWithLabels(key []string, val float32, labels []metrics.Label) {
	if s := l.sink.Load(); s != nil {
		s.AddSampleWithLabels(key, val, labels)
	}
}

var promHandler = promhttp.HandlerFor(prometheus.DefaultGatherer, promhttp.HandlerOpts{
	ErrorHandling: promhttp.ContinueOnError,
})

func (s *HTTPServer) metrics(w http.ResponseWriter, r *http.Request) (any, error) {
	switch format := r.URL.Query().Get("format"); format {
	case "":
		return s.agent.metrics.DisplayMetrics(w, r)
	case "prometheus":
		if !promSink.enabled() || !s.agent.config.telemetry().PrometheusMetrics {
			return nil, structs.BadRequest("format=prometheus needs telemetry { prometheus_metrics = true } in the agent configuration")
		}
		promHandler.ServeHTTP(w, r)
		return nil, nil
	default:
		return nil, structs.BadRequest("format: only \"prometheus\" is supported, got %q", format)
	}
}
