//go:build e2e && e2ecluster

package e2e

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// soakSample is one look at one agent process.
type soakSample struct {
	at       time.Time
	proc     string
	lifetime int
	age      time.Duration // since this lifetime's start
	pid      int
	rssKiB   int64
	fds      int
	// goroutines is -1 when the metrics endpoint did not answer.
	goroutines int
}

// soakCall is one timed API call.
type soakCall struct {
	op         string
	start, end time.Time
	err        string
}

// soakWindow is a kill and the time until the cluster had settled again.
type soakWindow struct {
	proc       string
	start, end time.Time
}

type soakRecorder struct {
	start, end time.Time
	events     atomic.Int64

	mu      sync.Mutex
	calls   []soakCall
	samples []soakSample
	windows []soakWindow
}

// call times f as one call of op and reports whether it succeeded.
func (r *soakRecorder) call(op string, f func() error) bool {
	start := time.Now()
	err := f()
	c := soakCall{op: op, start: start, end: time.Now()}
	if err != nil {
		c.err = err.Error()
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return err == nil
}

func (r *soakRecorder) sample(s soakSample) {
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
}

func (r *soakRecorder) window(proc string, start, end time.Time) {
	r.mu.Lock()
	r.windows = append(r.windows, soakWindow{proc: proc, start: start, end: end})
	r.mu.Unlock()
}

// inWindow tells whether the call overlaps a kill window.
func (r *soakRecorder) inWindow(c soakCall) bool {
	for _, w := range r.windows {
		if c.start.Before(w.end) && c.end.After(w.start) {
			return true
		}
	}
	return false
}

// soakFit is a least-squares line through (x, y): slope per unit of x, and r² (how much of the
// variation the line explains: near 1 for a steady climb, near 0 for noise around a level).
func soakFit(xs, ys []float64) (slope, r2 float64) {
	n := float64(len(xs))
	if len(xs) < 2 {
		return 0, 0
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return 0, 0
	}
	slope = sxy / sxx
	if syy == 0 {
		return slope, 0
	}
	return slope, sxy * sxy / (sxx * syy)
}

func soakMedian(ys []float64) float64 {
	if len(ys) == 0 {
		return 0
	}
	s := slices.Clone(ys)
	sort.Float64s(s)
	return s[len(s)/2]
}

// soakPercentile is the nearest-rank p-th percentile (0 < p ≤ 100) of ds.
func soakPercentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// soakMetric is how one resource is judged: a lifetime fails when the fitted line climbs
// faster than the larger of floor and share×median per hour, by more than minRise over the
// window (a short window's slope extrapolates a heap still settling), the climb is clear
// (r² ≥ soakMinR2) rather than noise, and three quarters of the window climb (not a step or
// two). The floors are well above what a steady
// process drifts (a Raft log growing until its next snapshot, a heap settling) and well below
// a leak of one goroutine, descriptor or few KiB per call of the churn (thousands an hour).
type soakMetric struct {
	name    string
	unit    string
	floor   float64 // per hour
	share   float64
	minRise float64
	value   func(soakSample) (float64, bool)
}

const soakMinR2 = 0.5

var soakMetrics = []soakMetric{
	{name: "RSS", unit: "MiB", floor: 64, share: 0.25, minRise: 16, value: func(s soakSample) (float64, bool) { return float64(s.rssKiB) / 1024, s.rssKiB >= 0 }},
	{name: "goroutines", unit: "", floor: 60, share: 0.25, minRise: 20, value: func(s soakSample) (float64, bool) { return float64(s.goroutines), s.goroutines >= 0 }},
	{name: "fds", unit: "", floor: 30, share: 0.25, minRise: 10, value: func(s soakSample) (float64, bool) { return float64(s.fds), s.fds >= 0 }},
}

// soakTrend is one metric over one process lifetime after its warm-up.
type soakTrend struct {
	median, slope, r2, bound float64
	judged, leaking          bool
}

func soakJudge(m soakMetric, xsHours, ys []float64, span, minWindow time.Duration) soakTrend {
	var tr soakTrend
	tr.median = soakMedian(ys)
	tr.slope, tr.r2 = soakFit(xsHours, ys)
	tr.bound = math.Max(m.floor, m.share*tr.median)
	tr.judged = span >= minWindow && len(ys) >= 6
	if !tr.judged || tr.slope <= tr.bound || tr.r2 < soakMinR2 || tr.slope*span.Hours() <= m.minRise {
		return tr
	}
	// A leak climbs all along; a step (a leadership change starting the leader's duties on
	// this server, the clients' connections moving to it after a kill) lifts the whole
	// line's slope too, but only in the quarter of the window it falls in. Two such steps
	// (clients arriving, then leadership) leave two quarters flat; a leak climbs in at least
	// three.
	climbing := 0
	for q := 0; q < 4; q++ {
		lo, hi := q*len(xsHours)/4, (q+1)*len(xsHours)/4
		if slope, _ := soakFit(xsHours[lo:hi], ys[lo:hi]); slope > tr.bound/2 {
			climbing++
		}
	}
	tr.leaking = climbing >= 3
	return tr
}

// soakLifetime is one process lifetime's figures.
type soakLifetime struct {
	proc          string
	lifetime, pid int
	samples       int
	span          time.Duration // judged span, after warm-up
	trends        []soakTrend   // one per soakMetrics entry
}

type soakReport struct {
	lifetimes []soakLifetime
	summary   string
	failures  []string
	latency   [][]string // CSV rows
}

func analyse(rec *soakRecorder, procs []string, cfg soakConfig) *soakReport {
	rep := &soakReport{}
	var b strings.Builder

	// Resources, per process lifetime, after warm-up.
	type key struct {
		proc     string
		lifetime int
	}
	byLife := map[key][]soakSample{}
	pids := map[key]int{}
	var order []key
	for _, s := range rec.samples {
		k := key{s.proc, s.lifetime}
		if _, seen := pids[k]; !seen {
			pids[k] = s.pid
			order = append(order, k)
		}
		if s.age >= cfg.warmup {
			byLife[k] = append(byLife[k], s)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		pi, pj := slices.Index(procs, order[i].proc), slices.Index(procs, order[j].proc)
		return pi < pj || pi == pj && order[i].lifetime < order[j].lifetime
	})
	judged := 0
	for _, k := range order {
		p, l := k.proc, k.lifetime
		ss := byLife[k]
		if len(ss) == 0 {
			rep.lifetimes = append(rep.lifetimes, soakLifetime{proc: p, lifetime: l, pid: pids[k]})
			continue
		}
		lt := soakLifetime{proc: p, lifetime: l, pid: ss[0].pid, samples: len(ss), span: ss[len(ss)-1].at.Sub(ss[0].at)}
		for _, m := range soakMetrics {
			var xs, ys []float64
			for _, s := range ss {
				if v, ok := m.value(s); ok {
					xs = append(xs, s.at.Sub(rec.start).Hours())
					ys = append(ys, v)
				}
			}
			tr := soakJudge(m, xs, ys, lt.span, cfg.minWindow)
			lt.trends = append(lt.trends, tr)
			if tr.judged {
				judged++
			}
			if tr.leaking {
				rep.failures = append(rep.failures, fmt.Sprintf("%s (lifetime %d, pid %d): %s climbs %.1f%s/h over %s (bound %.1f/h, r² %.2f)",
					p, l, lt.pid, m.name, tr.slope, m.unit, lt.span.Round(time.Second), tr.bound, tr.r2))
			}
		}
		rep.lifetimes = append(rep.lifetimes, lt)
	}

	// Calls: errors outside the kill windows, and latency per minute.
	var outside, outsideErr, inside, insideErr int
	perOp := map[string]int{}
	firstErrs := map[string]string{}
	for _, c := range rec.calls {
		if c.err == "" {
			perOp[c.op]++
		}
		if rec.inWindow(c) {
			inside++
			if c.err != "" {
				insideErr++
			}
			continue
		}
		outside++
		if c.err != "" {
			outsideErr++
			if _, seen := firstErrs[c.op]; !seen {
				firstErrs[c.op] = c.err
			}
		}
	}
	rate := 0.0
	if outside > 0 {
		rate = float64(outsideErr) / float64(outside)
	}
	var kills []string
	for _, w := range rec.windows {
		kills = append(kills, fmt.Sprintf("%s at %s (settled in %s)", w.proc, w.start.Sub(rec.start).Round(time.Second), w.end.Sub(w.start).Round(time.Second)))
	}
	fmt.Fprintf(&b, "run %s; %d leader kills: %s\n", rec.end.Sub(rec.start).Round(time.Second), len(rec.windows), strings.Join(kills, ", "))
	fmt.Fprintf(&b, "calls: %d; outside kill windows %d failed of %d (%.2f%%, bound %.2f%%); inside %d failed of %d\n",
		len(rec.calls), outsideErr, outside, 100*rate, 100*cfg.maxErrorRate, insideErr, inside)
	fmt.Fprintf(&b, "succeeded: register %d, update %d, stop %d, purge %d, exec %d, subscribe %d; event batches received %d\n",
		perOp["register"], perOp["update"], perOp["stop"], perOp["purge"], perOp["exec"], perOp["subscribe"], rec.events.Load())
	if rate > cfg.maxErrorRate {
		var ex []string
		for op, e := range firstErrs {
			ex = append(ex, op+": "+e)
		}
		sort.Strings(ex)
		rep.failures = append(rep.failures, fmt.Sprintf("%.2f%% of calls outside the kill windows failed (bound %.2f%%); first of each: %s",
			100*rate, 100*cfg.maxErrorRate, strings.Join(ex, "; ")))
	}
	for _, op := range []string{"register", "update", "stop", "purge", "exec", "subscribe"} {
		if perOp[op] == 0 {
			rep.failures = append(rep.failures, fmt.Sprintf("the run proves nothing: no %s call succeeded", op))
		}
	}
	if rec.events.Load() == 0 {
		rep.failures = append(rep.failures, "the run proves nothing: no event reached a subscriber")
	}
	if rec.end.Sub(rec.start) > cfg.killEvery+time.Minute && len(rec.windows) == 0 {
		rep.failures = append(rep.failures, "the run proves nothing: no leader was killed")
	}
	if judged == 0 {
		rep.failures = append(rep.failures, fmt.Sprintf("the run proves nothing: no process lived %s past its %s warm-up", cfg.minWindow, cfg.warmup))
	}

	fmt.Fprintf(&b, "per process lifetime, after a %s warm-up; slopes per hour (least squares), judged when the span is at least %s:\n", cfg.warmup, cfg.minWindow)
	fmt.Fprintf(&b, "%-4s %-4s %-8s %-6s %-7s | %-32s | %-28s | %-26s | %s\n", "proc", "life", "pid", "span", "samples",
		"RSS MiB: median slope/h (r²)", "goroutines: median slope/h", "fds: median slope/h", "verdict")
	for _, lt := range rep.lifetimes {
		if lt.samples == 0 {
			fmt.Fprintf(&b, "%-4s %-4d %-8d %-6s %-7d | %-32s | %-28s | %-26s | %s\n", lt.proc, lt.lifetime, lt.pid, "-", 0, "", "", "", "ended within its warm-up")
			continue
		}
		verdict := "flat"
		var cols []string
		for i, tr := range lt.trends {
			cols = append(cols, fmt.Sprintf("%.0f %+.1f (%.2f)", tr.median, tr.slope, tr.r2))
			switch {
			case tr.leaking:
				verdict = "CLIMBING: " + soakMetrics[i].name
			case !tr.judged && verdict == "flat":
				verdict = "too short to judge"
			}
		}
		fmt.Fprintf(&b, "%-4s %-4d %-8d %-6s %-7d | %-32s | %-28s | %-26s | %s\n", lt.proc, lt.lifetime, lt.pid,
			lt.span.Round(time.Second), lt.samples, cols[0], cols[1], cols[2], verdict)
	}

	// Latency per minute: the churn calls together, and each op.
	rep.latency = [][]string{{"minute", "op", "calls", "errors", "p50_ms", "p99_ms"}}
	minutes := int((rec.end.Sub(rec.start) + time.Minute - 1) / time.Minute)
	ops := []string{"churn", "register", "update", "stop", "purge", "exec", "subscribe"}
	var p99s []string
	for m := 0; m < minutes; m++ {
		for _, op := range ops {
			var ds []time.Duration
			errs := 0
			for _, c := range rec.calls {
				if int(c.start.Sub(rec.start)/time.Minute) != m {
					continue
				}
				if c.op != op && !(op == "churn" && (c.op == "register" || c.op == "update" || c.op == "stop" || c.op == "purge")) {
					continue
				}
				if c.err != "" {
					errs++
					continue
				}
				ds = append(ds, c.end.Sub(c.start))
			}
			p50, p99 := soakPercentile(ds, 50), soakPercentile(ds, 99)
			rep.latency = append(rep.latency, []string{strconv.Itoa(m), op, strconv.Itoa(len(ds) + errs), strconv.Itoa(errs),
				fmt.Sprintf("%.1f", soakMs(p50)), fmt.Sprintf("%.1f", soakMs(p99))})
			if op == "churn" && len(ds) == 0 {
				p99s = append(p99s, "-")
			} else if op == "churn" {
				p99s = append(p99s, fmt.Sprintf("%.0f", soakMs(p99)))
			}
		}
	}
	fmt.Fprintf(&b, "churn p99 per minute (ms, successful calls): %s\n", strings.Join(p99s, " "))
	var all, exec []time.Duration
	for _, c := range rec.calls {
		if c.err != "" {
			continue
		}
		switch c.op {
		case "register", "update", "stop", "purge":
			all = append(all, c.end.Sub(c.start))
		case "exec":
			exec = append(exec, c.end.Sub(c.start))
		}
	}
	fmt.Fprintf(&b, "whole run: churn p50 %.1f ms, p99 %.1f ms; exec session p50 %.1f ms, p99 %.1f ms\n",
		soakMs(soakPercentile(all, 50)), soakMs(soakPercentile(all, 99)), soakMs(soakPercentile(exec, 50)), soakMs(soakPercentile(exec, 99)))
	if len(rep.failures) == 0 {
		b.WriteString("verdict: PASS\n")
	} else {
		b.WriteString("verdict: FAIL\n")
		for _, f := range rep.failures {
			b.WriteString("  " + f + "\n")
		}
	}
	rep.summary = b.String()
	return rep
}

func soakMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// write leaves samples.csv, latency.csv, slopes.csv and summary.txt in dir.
func (rep *soakReport) write(dir string, rec *soakRecorder) error {
	samples := [][]string{{"seconds", "process", "lifetime", "pid", "rss_kib", "goroutines", "fds"}}
	for _, s := range rec.samples {
		samples = append(samples, []string{fmt.Sprintf("%.1f", s.at.Sub(rec.start).Seconds()), s.proc, strconv.Itoa(s.lifetime),
			strconv.Itoa(s.pid), strconv.FormatInt(s.rssKiB, 10), strconv.Itoa(s.goroutines), strconv.Itoa(s.fds)})
	}
	slopes := [][]string{{"process", "lifetime", "pid", "span_s", "samples", "metric", "median", "slope_per_hour", "r2", "bound_per_hour", "judged", "climbing"}}
	for _, lt := range rep.lifetimes {
		for i, tr := range lt.trends {
			slopes = append(slopes, []string{lt.proc, strconv.Itoa(lt.lifetime), strconv.Itoa(lt.pid), fmt.Sprintf("%.0f", lt.span.Seconds()),
				strconv.Itoa(lt.samples), soakMetrics[i].name, fmt.Sprintf("%.2f", tr.median), fmt.Sprintf("%.2f", tr.slope),
				fmt.Sprintf("%.3f", tr.r2), fmt.Sprintf("%.2f", tr.bound), strconv.FormatBool(tr.judged), strconv.FormatBool(tr.leaking)})
		}
	}
	for name, rows := range map[string][][]string{"samples.csv": samples, "latency.csv": rep.latency, "slopes.csv": slopes} {
		if err := soakWriteCSV(filepath.Join(dir, name), rows); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "summary.txt"), []byte(rep.summary), 0o644)
}

func soakWriteCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestSoakJudge checks the verdict on made-up series, so a leak is known to fail the soak run
// without waiting half an hour for one: a steady climb fails, noise around a level, a single
// step (a leadership change) and a lifetime too short to judge do not.
func TestSoakJudge(t *testing.T) {
	const n = 120
	minutes := func(i int) float64 { return float64(i) * 15 / 3600 } // a sample every 15 s: 30 min
	series := func(f func(i int) float64) (xs, ys []float64) {
		for i := 0; i < n; i++ {
			xs = append(xs, minutes(i))
			ys = append(ys, f(i))
		}
		return
	}
	goroutines := soakMetrics[1]
	rss := soakMetrics[0]
	noise := func(i int) float64 { return float64((i*7919)%13) - 6 }
	cases := []struct {
		name   string
		metric soakMetric
		f      func(i int) float64
		span   time.Duration
		// minWindow is 10 minutes unless set.
		minWindow time.Duration
		leaking   bool
	}{
		{name: "flat goroutines with noise", metric: goroutines, f: func(i int) float64 { return 180 + noise(i) }, span: 30 * time.Minute},
		{name: "a goroutine every two minutes, below the floor", metric: goroutines, f: func(i int) float64 { return 180 + float64(i)/8 + noise(i)/3 }, span: 30 * time.Minute},
		{name: "one leaked goroutine per exec session", metric: goroutines, f: func(i int) float64 { return 180 + float64(i)*8 + noise(i) }, span: 30 * time.Minute, leaking: true},
		{name: "a step of 30 goroutines half way", metric: goroutines, f: func(i int) float64 {
			if i > n/2 {
				return 210 + noise(i)
			}
			return 180 + noise(i)
		}, span: 30 * time.Minute},
		{name: "two steps: the clients' connections arrive, then leadership", metric: goroutines, f: func(i int) float64 {
			switch {
			case i > 3*n/5:
				return 75 + noise(i)/3
			case i > n/5:
				return 53 + noise(i)/3
			}
			return 44 + noise(i)/3
		}, span: 30 * time.Minute},
		{name: "a leak with a step on top", metric: goroutines, f: func(i int) float64 {
			if i > n/2 {
				return 210 + float64(i)*8 + noise(i)
			}
			return 180 + float64(i)*8 + noise(i)
		}, span: 30 * time.Minute, leaking: true},
		{name: "the same climb over a lifetime too short", metric: goroutines, f: func(i int) float64 { return 180 + float64(i)*8 }, span: time.Minute},
		{name: "RSS settling by 10 MiB", metric: rss, f: func(i int) float64 { return 90 + 10*(1-math.Exp(-float64(i)/20)) + noise(i)/4 }, span: 30 * time.Minute},
		{name: "RSS settling by 10 MiB in a short window", metric: rss, f: func(i int) float64 { return 90 + 300*minutes(i) + noise(i)/8 }, span: 2 * time.Minute, minWindow: time.Minute},
		{name: "RSS leaking 200 MiB an hour", metric: rss, f: func(i int) float64 { return 90 + 200*minutes(i) + noise(i)/4 }, span: 30 * time.Minute, leaking: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xs, ys := series(tc.f)
			minWindow := tc.minWindow
			if minWindow == 0 {
				minWindow = 10 * time.Minute
			}
			n := int(tc.span / (15 * time.Second))
			tr := soakJudge(tc.metric, xs[:n], ys[:n], tc.span, minWindow)
			must.Eq(t, tc.leaking, tr.leaking, must.Sprintf("slope %.1f/h, r² %.2f, bound %.1f/h", tr.slope, tr.r2, tr.bound))
		})
	}
}
