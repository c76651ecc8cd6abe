package servicecheck

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The cost of one check run against a loopback server, which at 1,000 checks per node and
// their interval gives the checks' CPU share: run with -bench . -benchtime and divide.
func BenchmarkCheckRun(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, spec := range []Spec{
		{Name: "http", Type: TypeHTTP, Address: "127.0.0.1", Port: port, Path: "/", Timeout: time.Second},
		{Name: "tcp", Type: TypeTCP, Address: "127.0.0.1", Port: port, Timeout: time.Second},
	} {
		b.Run(spec.Name, func(b *testing.B) {
			hc := spec.httpClient()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if r := spec.run(context.Background(), nil, hc); r.status != StatusSuccess {
					b.Fatalf("check failed: %s", r.output)
				}
			}
		})
	}
}

// BenchmarkRunner_1000Checks runs 1,000 checks (half http, half tcp, 1s interval) in one
// runner against a loopback server for a few seconds and reports the process's CPU time per
// check run (user+system, the loopback server's share included, so an upper bound) and the
// CPU share the checks of one node cost at that interval.
func BenchmarkRunner_1000Checks(b *testing.B) {
	var runs atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs.Add(1) }))
	srv.Start()
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	const checks = 1000
	const window = 3 * time.Second
	specs := make([]Spec, 0, checks)
	for i := 0; i < checks; i++ {
		typ := TypeHTTP
		if i%2 == 1 {
			typ = TypeTCP
		}
		specs = append(specs, Spec{ID: CheckID("alloc", "task", "svc", strconv.Itoa(i)), Name: strconv.Itoa(i),
			Type: typ, Address: "127.0.0.1", Port: port, Path: "/", Interval: time.Second, Timeout: time.Second})
	}
	for i := 0; i < b.N; i++ {
		r := NewRunner(hclog.NewNullLogger(), nil, nil, nil)
		cpuBefore := processCPU(b)
		start := time.Now()
		r.Set(specs)
		time.Sleep(window)
		r.Stop()
		elapsed := time.Since(start)
		cpu := processCPU(b) - cpuBefore
		// Every check runs about once per interval; count the runs the interval implies
		// rather than only the http ones the server saw.
		perCheckRuns := float64(checks) * elapsed.Seconds() / time.Second.Seconds()
		b.ReportMetric(float64(cpu.Microseconds())/perCheckRuns, "cpu-µs/check-run")
		b.ReportMetric(100*cpu.Seconds()/elapsed.Seconds(), "%cpu-of-one-core")
		b.ReportMetric(float64(runs.Load())/elapsed.Seconds(), "http-runs/s")
		runs.Store(0)
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
