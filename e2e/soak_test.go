//go:build e2e && e2ecluster

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestSoak is the soak run (`make soak`, not CI): 3 servers and 2 client-only agents, each on
// its own lab host, under continuous job churn (register, update, stop, purge), exec sessions
// and event stream subscribers, with the leader killed -9 and restarted every SOAK_KILL_EVERY.
// Every agent process is sampled (RSS, goroutines, open fds) and every API call timed; the
// run fails when a resource grows within one process lifetime, or when calls fail outside the
// windows around the kills. It runs only when SOAK_TIME is set: it takes as long as asked.
func TestSoak(t *testing.T) {
	cfg := soakSettings(t)
	t.Logf("soak: %s, leader killed every %s, samples every %s, warm-up %s; output in %s",
		cfg.duration, cfg.killEvery, cfg.sample, cfg.warmup, cfg.out)
	sc := newSoakCluster(t, cfg.out)
	rec := &soakRecorder{}

	// The exec sessions' target: one long-running allocation on each client.
	execJob := soakJob("soak-exec", 2, "0")
	execJob.Constraints = append(execJob.Constraints, api.NewConstraint("", "distinct_hosts", "true"))
	_, _, err := sc.api(sc.leaderOrAny()).Jobs().Register(execJob, nil)
	must.NoError(t, err)
	waitUntil(t, 90*time.Second, "the exec target running on both clients", func() bool {
		return len(runningAllocs(sc.api(sc.leaderOrAny()), "soak-exec")) == 2
	})

	rec.start = time.Now()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	goOwned := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	const churners = 3
	for w := 0; w < churners; w++ {
		rng := rand.New(rand.NewSource(int64(w) + 1))
		goOwned(func() { sc.churn(ctx, rec, w, rng) })
	}
	goOwned(func() { sc.execLoop(ctx, rec, rand.New(rand.NewSource(100))) })
	// One subscriber stays with each server (reconnecting to it after a kill), so each
	// server's own goroutine count does not move with subscribers; one more subscribes,
	// reads a while and leaves, through random servers, to exercise subscription teardown.
	for _, s := range sc.servers {
		goOwned(func() { sc.subscribeLoop(ctx, rec, func() *labHost { return s }, 0) })
	}
	churnRng := rand.New(rand.NewSource(200))
	goOwned(func() { sc.subscribeLoop(ctx, rec, func() *labHost { return sc.randomLive(churnRng) }, 10*time.Second) })
	goOwned(func() { sc.sampleLoop(ctx, rec, cfg.sample) })
	goOwned(func() { sc.killLoop(ctx, rec, cfg.killEvery) })

	select {
	case <-time.After(cfg.duration):
	case <-sc.broken:
		t.Error("soak: the cluster did not recover from a leader kill; stopping early")
	}
	stop()
	wg.Wait()
	rec.end = time.Now()

	rep := analyse(rec, sc.procNames(), cfg)
	must.NoError(t, rep.write(cfg.out, rec))
	for _, line := range strings.Split(strings.TrimRight(rep.summary, "\n"), "\n") {
		t.Logf("soak: %s", line)
	}
	t.Logf("soak: samples, latency, slopes and the summary are in %s (agent logs in %s)", cfg.out, filepath.Join(cfg.out, "logs"))
	for _, f := range rep.failures {
		t.Errorf("soak: %s", f)
	}
}

type soakConfig struct {
	duration  time.Duration
	killEvery time.Duration
	sample    time.Duration
	warmup    time.Duration
	// minWindow is the least time after warm-up a lifetime needs before its slopes are judged:
	// a shorter one extrapolates noise.
	minWindow time.Duration
	// maxErrorRate bounds the share of failed calls that began and ended outside every kill
	// window.
	maxErrorRate float64
	out          string
}

func soakDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	must.NoError(t, err, must.Sprintf("%s must be a duration such as 30m or 10s, not %q", name, v))
	must.Positive(t, d, must.Sprintf("%s must be positive", name))
	return d
}

func soakSettings(t *testing.T) soakConfig {
	if os.Getenv("SOAK_TIME") == "" {
		t.Skip("the soak run takes SOAK_TIME (make soak runs 30m); it is not part of the e2e suites")
	}
	c := soakConfig{duration: soakDuration(t, "SOAK_TIME", 30*time.Minute), maxErrorRate: 0.01}
	c.killEvery = soakDuration(t, "SOAK_KILL_EVERY", 5*time.Minute)
	// About 120 samples a run, between one every 2 s and one every 10 s.
	c.sample = soakDuration(t, "SOAK_SAMPLE", min(max(c.duration/120, 2*time.Second), 10*time.Second))
	c.warmup = soakDuration(t, "SOAK_WARMUP", min(c.duration/4, 5*time.Minute))
	c.minWindow = soakDuration(t, "SOAK_MIN_WINDOW", min(max(c.duration/3, time.Minute), 10*time.Minute))
	if v := os.Getenv("SOAK_MAX_ERROR_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		must.True(t, err == nil && f >= 0 && f <= 1, must.Sprintf("SOAK_MAX_ERROR_RATE must be a fraction such as 0.01, not %q", v))
		c.maxErrorRate = f
	}
	c.out = os.Getenv("SOAK_OUT")
	if c.out == "" {
		dir, err := os.MkdirTemp("", "nomad-soak-")
		must.NoError(t, err)
		c.out = dir
	}
	must.NoError(t, os.MkdirAll(filepath.Join(c.out, "logs"), 0o755))
	return c
}

// soakProc is one agent host's current process; lifetime counts its starts, so samples of a
// restarted process are judged apart from its predecessor's.
type soakProc struct {
	host     *labHost
	config   string
	log      *os.File
	cmd      *exec.Cmd // nil while killed
	lifetime int
	started  time.Time
}

// soakCluster is 3 servers and 2 client-only agents with plain HTTP (TLS changes nothing the
// soak measures) and Prometheus metrics on, for go_goroutines.
type soakCluster struct {
	t       *testing.T
	lab     *netLab
	servers []*labHost
	clients []*labHost
	http    *http.Client
	// stream has no overall timeout: event streams are meant to stay open.
	stream *http.Client
	apis   map[string]*api.Client

	mu    sync.Mutex
	procs map[string]*soakProc

	// broken is closed when the cluster does not recover from a kill.
	broken     chan struct{}
	brokenOnce sync.Once
}

func newSoakCluster(t *testing.T, out string) *soakCluster {
	lab := newLab(t)
	sc := &soakCluster{
		t: t, lab: lab, procs: map[string]*soakProc{}, apis: map[string]*api.Client{}, broken: make(chan struct{}),
		http:   &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: 30 * time.Second}},
		stream: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}},
	}
	t.Cleanup(sc.http.CloseIdleConnections)
	t.Cleanup(sc.stream.CloseIdleConnections)
	for i := 1; i <= 3; i++ {
		sc.servers = append(sc.servers, lab.host(fmt.Sprintf("s%d", i), 10+i))
	}
	for i := 1; i <= 2; i++ {
		sc.clients = append(sc.clients, lab.host(fmt.Sprintf("c%d", i), 20+i))
	}
	dir := t.TempDir()
	for _, h := range append(append([]*labHost{}, sc.servers...), sc.clients...) {
		p := &soakProc{host: h, config: filepath.Join(dir, h.name+".hcl")}
		must.NoError(t, os.WriteFile(p.config, []byte(sc.config(h, filepath.Join(dir, h.name+"-data"))), 0o600))
		f, err := os.Create(filepath.Join(out, "logs", h.name+".log"))
		must.NoError(t, err)
		p.log = f
		sc.procs[h.name] = p
		cl, err := api.NewClient(&api.Config{Address: fmt.Sprintf("http://%s:%d", h.ip, labHTTP), HttpClient: sc.http})
		must.NoError(t, err)
		sc.apis[h.name] = cl
	}
	t.Cleanup(func() {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		for _, p := range sc.procs {
			if p.cmd != nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
			// raw_exec tasks outlive their agent by design.
			reapTasks(p.config)
			_ = p.log.Close()
		}
	})
	for _, h := range sc.servers {
		must.NoError(t, sc.start(h))
	}
	waitUntil(t, 60*time.Second, "a leader with three peers", func() bool {
		l := sc.leader()
		if l == nil {
			return false
		}
		peers, err := sc.api(l).Status().Peers()
		return err == nil && len(peers) == 3
	})
	for _, h := range sc.clients {
		must.NoError(t, sc.start(h))
	}
	waitUntil(t, 60*time.Second, "both client nodes ready", func() bool {
		nodes, _, err := sc.api(sc.leaderOrAny()).Nodes().List(nil)
		ready := 0
		for _, n := range nodes {
			if n.Status == "ready" {
				ready++
			}
		}
		return err == nil && ready == 2
	})
	return sc
}

func (sc *soakCluster) config(h *labHost, dataDir string) string {
	var role string
	if strings.HasPrefix(h.name, "s") {
		var joins []string
		for _, o := range sc.servers {
			if o != h {
				joins = append(joins, fmt.Sprintf("%q", fmt.Sprintf("%s:%d", o.ip, labJoinPort)))
			}
		}
		// The soak looks for leaks, not for state kept by design: purged jobs' evaluations,
		// allocations and purge records are collected within a minute or two, so the state,
		// and with it the heap, levels off once the warm-up is over.
		role = fmt.Sprintf(`
server {
  enabled                 = true
  bootstrap_expect        = 3
  retry_join              = [%s]
  encrypt                 = %q
  job_gc_interval         = "30s"
  job_gc_threshold        = "1m"
  eval_gc_threshold       = "1m"
  purge_history_retention = "1m"
}`, strings.Join(joins, ", "), e2eClusterKey)
	} else {
		var servers []string
		for _, s := range sc.servers {
			servers = append(servers, fmt.Sprintf("%q", fmt.Sprintf("%s:%d", s.ip, labRPC)))
		}
		role = fmt.Sprintf(`
client {
  enabled = true
  servers = [%s]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}`, strings.Join(servers, ", "))
	}
	// INFO, not DEBUG: half an hour of DEBUG lines from five agents is disk and CPU the
	// measured processes would pay for.
	return fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = %q
log_level = "INFO"
# The profiles under /debug/pprof/ are how a slope the report flags is traced to its cause.
enable_debug = true
ports {
  http = %d
  rpc  = %d
  serf = %d
}
telemetry {
  prometheus_metrics = true
}
%s
`, h.name, dataDir, h.ip, labHTTP, labRPC, labSerf, role)
}

// start runs the host's agent; `ip netns exec` execs the binary in place, so the PID is the
// agent's own and its /proc entries are the agent's.
func (sc *soakCluster) start(h *labHost) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	p := sc.procs[h.name]
	cmd := exec.Command("ip", "netns", "exec", h.ns, binary(sc.t), "agent", "-config", p.config)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return err
	}
	p.lifetime++
	p.started = time.Now()
	p.cmd = cmd
	fmt.Fprintf(p.log, "\n===== soak: lifetime %d, pid %d =====\n", p.lifetime, cmd.Process.Pid)
	return nil
}

func (sc *soakCluster) kill(h *labHost) {
	sc.mu.Lock()
	p := sc.procs[h.name]
	cmd := p.cmd
	p.cmd = nil
	sc.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

func (sc *soakCluster) alive(h *labHost) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.procs[h.name].cmd != nil
}

func (sc *soakCluster) api(h *labHost) *api.Client { return sc.apis[h.name] }

func (sc *soakCluster) procNames() []string {
	var names []string
	for _, h := range append(append([]*labHost{}, sc.servers...), sc.clients...) {
		names = append(names, h.name)
	}
	return names
}

// leader is the server some live server names as leader, or nil.
func (sc *soakCluster) leader() *labHost {
	for _, s := range sc.servers {
		if !sc.alive(s) {
			continue
		}
		addr, err := sc.api(s).Status().Leader()
		if err != nil || addr == "" {
			continue
		}
		for _, c := range sc.servers {
			if addr == fmt.Sprintf("%s:%d", c.ip, labRPC) {
				return c
			}
		}
	}
	return nil
}

func (sc *soakCluster) leaderOrAny() *labHost {
	if l := sc.leader(); l != nil {
		return l
	}
	return sc.servers[0]
}

// randomLive is a random server believed running (any server when none is).
func (sc *soakCluster) randomLive(rng *rand.Rand) *labHost {
	for _, i := range rng.Perm(len(sc.servers)) {
		if sc.alive(sc.servers[i]) {
			return sc.servers[i]
		}
	}
	return sc.servers[rng.Intn(len(sc.servers))]
}

// soakJob is a raw_exec sleeper of count allocations; rev goes into the task's env, so an
// update replaces the allocations (a destructive update) rather than only bumping a version.
func soakJob(id string, count int, rev string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("main", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"3600"}}
	task.Env = map[string]string{"SOAK_REV": rev}
	task.Resources = &api.Resources{CPU: soakPtr(20), MemoryMB: soakPtr(16)}
	group := api.NewTaskGroup("g", count).AddTask(task)
	job.AddTaskGroup(group)
	return job
}

func soakPtr[T any](v T) *T { return &v }

// churn registers a job, updates it, stops it and purges it, over and over, each call through
// a random live server.
func (sc *soakCluster) churn(ctx context.Context, rec *soakRecorder, w int, rng *rand.Rand) {
	pause := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Duration(300+rng.Intn(900)) * time.Millisecond):
			return true
		}
	}
	for n := 1; ctx.Err() == nil; n++ {
		id := fmt.Sprintf("soak-%d-%d", w, n)
		ok := rec.call("register", func() error {
			_, _, err := sc.api(sc.randomLive(rng)).Jobs().Register(soakJob(id, 1, "1"), nil)
			return err
		}) && pause() && rec.call("update", func() error {
			_, _, err := sc.api(sc.randomLive(rng)).Jobs().Register(soakJob(id, 2, "2"), nil)
			return err
		}) && pause() && rec.call("stop", func() error {
			_, _, err := sc.api(sc.randomLive(rng)).Jobs().Deregister(id, false, nil)
			return err
		}) && pause() && rec.call("purge", func() error {
			_, _, err := sc.api(sc.randomLive(rng)).Jobs().Deregister(id, true, nil)
			return err
		})
		if !ok {
			// A step failed (a kill, most likely): purge what may be left, unrecorded, so
			// jobs do not pile up, then go on with a new job.
			for i := 0; i < 20; i++ {
				if _, _, err := sc.api(sc.randomLive(rng)).Jobs().Deregister(id, true, nil); err == nil || strings.Contains(err.Error(), "not found") {
					break
				}
				if !pause() {
					return
				}
			}
		}
	}
}

// execLoop runs short exec sessions in the exec target's allocations, through random live
// servers.
func (sc *soakCluster) execLoop(ctx context.Context, rec *soakRecorder, rng *rand.Rand) {
	for ctx.Err() == nil {
		cl := sc.api(sc.randomLive(rng))
		rec.call("exec", func() error {
			allocs := runningAllocs(cl, "soak-exec")
			if len(allocs) == 0 {
				return fmt.Errorf("no running allocation of soak-exec")
			}
			alloc, _, err := cl.Allocations().Info(allocs[rng.Intn(len(allocs))].ID, nil)
			if err != nil {
				return err
			}
			ectx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			code, err := cl.Allocations().Exec(ectx, alloc, "main", false, []string{"/bin/echo", "soak"},
				strings.NewReader(""), &stdout, &stderr, nil, nil)
			if err != nil {
				return err
			}
			if code != 0 || stdout.String() != "soak\n" {
				return fmt.Errorf("exec: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
			}
			return nil
		})
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(500+rng.Intn(1000)) * time.Millisecond):
		}
	}
}

// subscribeLoop keeps an event stream open through the server target picks; with hold > 0 it
// leaves after about hold and subscribes again. Opening the stream (to its first line) is a
// recorded call; a stream the server ends (a kill) is reopened after a second.
func (sc *soakCluster) subscribeLoop(ctx context.Context, rec *soakRecorder, target func() *labHost, hold time.Duration) {
	for ctx.Err() == nil {
		h := target()
		if !sc.alive(h) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				continue
			}
		}
		life := time.Duration(1 << 62)
		if hold > 0 {
			life = hold/2 + time.Duration(rand.Int63n(int64(hold)))
		}
		sctx, cancel := context.WithTimeout(ctx, life)
		var body io.ReadCloser
		rec.call("subscribe", func() error {
			req, err := http.NewRequestWithContext(sctx, http.MethodGet, fmt.Sprintf("http://%s:%d/v1/event/stream", h.ip, labHTTP), nil)
			if err != nil {
				return err
			}
			// The first line ({} at once) proves the subscription is live.
			first, cancelFirst := context.WithTimeout(sctx, 10*time.Second)
			defer cancelFirst()
			go func() {
				<-first.Done()
				if first.Err() == context.DeadlineExceeded {
					cancel()
				}
			}()
			resp, err := sc.stream.Do(req)
			if err != nil {
				return err
			}
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return fmt.Errorf("event stream: %d %s", resp.StatusCode, strings.TrimSpace(string(b)))
			}
			r := bufio.NewReader(resp.Body)
			if _, err := r.ReadString('\n'); err != nil {
				resp.Body.Close()
				return err
			}
			body = struct {
				io.Reader
				io.Closer
			}{r, resp.Body}
			return nil
		})
		if body != nil {
			sc.readEvents(rec, body)
			body.Close()
		}
		cancel()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// readEvents counts event batches until the stream ends.
func (sc *soakCluster) readEvents(rec *soakRecorder, body io.Reader) {
	s := bufio.NewScanner(body)
	s.Buffer(make([]byte, 64<<10), 16<<20)
	for s.Scan() {
		if bytes.HasPrefix(s.Bytes(), []byte(`{"Index"`)) {
			rec.events.Add(1)
		}
	}
}

// killLoop kills the leader every `every` and restarts it a few seconds later; the window
// from the kill until the cluster has a leader and the restarted server answers again (plus a
// settling grace) is recorded, and calls overlapping it do not count against the error bound.
func (sc *soakCluster) killLoop(ctx context.Context, rec *soakRecorder, every time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		l := sc.leader()
		if l == nil {
			sc.t.Errorf("soak: no leader to kill")
			continue
		}
		start := time.Now()
		sc.kill(l)
		sc.t.Logf("soak: kill -9 of the leader %s at %s", l.name, start.Sub(rec.start).Round(time.Second))
		time.Sleep(3 * time.Second)
		if err := sc.start(l); err != nil {
			sc.t.Errorf("soak: restart %s: %v", l.name, err)
			sc.brokenOnce.Do(func() { close(sc.broken) })
			return
		}
		deadline := time.Now().Add(90 * time.Second)
		for {
			leader := sc.leader()
			_, err := sc.api(l).Agent().Self()
			if leader != nil && err == nil {
				break
			}
			if time.Now().After(deadline) {
				sc.t.Errorf("soak: 90 s after %s's restart, leader %v, %s answers: %v", l.name, leader, l.name, err)
				sc.brokenOnce.Do(func() { close(sc.broken) })
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		// Calls in flight towards the old leader's followers time out up to 10 s later.
		end := time.Now().Add(10 * time.Second)
		rec.window(l.name, start, end)
		sc.t.Logf("soak: %s back and a leader elected %s after the kill", l.name, time.Since(start).Round(100*time.Millisecond))
	}
}

// sampleLoop samples every running agent every period.
func (sc *soakCluster) sampleLoop(ctx context.Context, rec *soakRecorder, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, name := range sc.procNames() {
			sc.mu.Lock()
			p := sc.procs[name]
			cmd, lifetime, started := p.cmd, p.lifetime, p.started
			sc.mu.Unlock()
			if cmd == nil {
				continue
			}
			pid := cmd.Process.Pid
			s := soakSample{at: time.Now(), proc: name, lifetime: lifetime, age: time.Since(started), pid: pid,
				rssKiB: procRSS(pid), fds: procFDs(pid), goroutines: sc.goroutines(p.host)}
			if s.rssKiB < 0 {
				// Killed between the check and the read.
				continue
			}
			rec.sample(s)
		}
	}
}

// procRSS is VmRSS from /proc/pid/status in KiB, or -1.
func procRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// procFDs counts /proc/pid/fd, or -1.
func procFDs(pid int) int {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(entries)
}

// goroutines is go_goroutines from the agent's Prometheus metrics, or -1.
func (sc *soakCluster) goroutines(h *labHost) int {
	resp, err := sc.http.Get(fmt.Sprintf("http://%s:%d/v1/metrics?format=prometheus", h.ip, labHTTP))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return -1
	}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	n := -1
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "go_goroutines "); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				n = int(f)
			}
		}
	}
	return n
}
