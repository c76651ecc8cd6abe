//go:build e2e && e2ecluster

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/nomadfork/nomad/internal/jepsen"
	"github.com/nomadfork/nomad/internal/netfault"
	"github.com/shoenig/test/must"
)

// TestJepsen is the Jepsen-style suite (`make jepsen`): clients read and check-and-set
// variables, register and list jobs, create, read and delete ACL tokens, and register, read
// and purge jobs (with their purge history records), through every server of a 3- or 5-server
// cluster while a nemesis kills, pauses, partitions servers, fills one's disk and kills
// servers while they take or install snapshots; each recorded history must be linearizable
// (porcupine). Settings come from the environment: JEPSEN_TIME (how long the workload runs,
// default 30s), JEPSEN_SERVERS (3 or 5), JEPSEN_SEED (the nemesis's and the clients' random
// choices), JEPSEN_WORKLOAD (register,set,acl,purge; default all, run together) and JEPSEN_OUT
// (where a failing run leaves its histories, visualisations and server logs);
// JEPSEN_READS=stale reads the register with ?stale instead and checks what stale reads
// promise (jepsen.CheckStale), porcupine's verdict only reported.
func TestJepsen(t *testing.T) {
	cfg := jepsenSettings(t)
	t.Logf("jepsen: %d servers, %s, seed %d, workloads %v, faults %v, stale reads %v, failures saved under %s",
		cfg.servers, cfg.duration, cfg.seed, cfg.workloads, cfg.faults, cfg.stale, cfg.out)
	jc := newJepsenCluster(t, cfg.servers)
	jc.stale = cfg.stale
	rec := &jepsenRecorder{start: time.Now()}
	jc.mu.Lock()
	jc.clock = rec.now
	jc.mu.Unlock()
	keys := []string{"k1", "k2", "k3", "k4"}
	on := func(w string) bool { return slices.Contains(cfg.workloads, w) }

	ctx, stopWorkload := context.WithCancel(context.Background())
	var clients sync.WaitGroup
	if on("register") {
		workers := 6
		if len(cfg.workloads) > 1 {
			// Room on a small machine for the other workloads' clients.
			workers = 4
		}
		for w := 0; w < workers; w++ {
			clients.Add(1)
			go func(w int) {
				defer clients.Done()
				jc.worker(ctx, rec, w, rand.New(rand.NewSource(cfg.seed+int64(w)+1)), keys)
			}(w)
		}
	}
	if on("set") {
		for w := 0; w < 2; w++ {
			clients.Add(1)
			go func(w int) {
				defer clients.Done()
				jc.setWorker(ctx, rec, 100+w, rand.New(rand.NewSource(cfg.seed+int64(100+w))))
			}(w)
		}
	}
	// The lifecycle workloads: each client returns the objects it created, for the final
	// reads through every server.
	lifeWorkloads := []*lifeWorkload{
		{name: "acl", ops: tokenOps{}, model: jepsen.TokenModel, firstClient: 200},
		{name: "purge", ops: purgeOps{}, model: jepsen.PurgeModel, firstClient: 300},
	}
	for _, lw := range lifeWorkloads {
		if !on(lw.name) {
			continue
		}
		lw.enabled = true
		for w := 0; w < 2; w++ {
			clients.Add(1)
			go func(id int) {
				defer clients.Done()
				objs := jc.lifeWorker(ctx, lw.ops, lw.add, rec.now, id, rand.New(rand.NewSource(cfg.seed+int64(id))))
				lw.mu.Lock()
				lw.objs = append(lw.objs, objs...)
				lw.mu.Unlock()
			}(lw.firstClient + w)
		}
	}
	nem := &nemesis{jc: jc, rec: rec, rng: rand.New(rand.NewSource(cfg.seed)), kinds: cfg.faults}
	nemCtx, stopNemesis := context.WithCancel(context.Background())
	nemDone := make(chan struct{})
	go func() { defer close(nemDone); nem.run(nemCtx) }()

	time.Sleep(cfg.duration)
	stopNemesis()
	<-nemDone
	stopWorkload()
	clients.Wait()

	// Everything healed by the nemesis on its way out; the cluster must come back by itself:
	// every object read through every server, and every server (the one whose disk filled,
	// the ones killed mid-snapshot) healthy and caught up.
	jc.healAll()
	const healLimit = 90 * time.Second
	deadline := time.Now().Add(healLimit)
	var final error
	if on("register") {
		final = jc.finalReads(rec, keys, healLimit)
	}
	if final == nil && on("set") {
		final = jc.finalLists(rec, healLimit)
	}
	for _, lw := range lifeWorkloads {
		if final == nil && lw.enabled {
			final = jc.finalLife(lw.ops, lw.objs, lw.add, rec.now, deadline)
		}
	}
	if final == nil {
		final = jc.waitHealthy(deadline)
	}
	t.Logf("jepsen: faults: %s", nem.summary())

	timeout := time.Minute
	if cfg.duration > timeout {
		timeout = cfg.duration
	}
	var results []jepsenResult
	if on("register") {
		history := rec.ops()
		var okReads, lostReads, okWrites, unknown, failed int
		for _, op := range history {
			switch {
			case op.Input.Kind == jepsen.Read && op.Output.Outcome == jepsen.OK:
				okReads++
			case op.Input.Kind == jepsen.Read:
				lostReads++
			case op.Output.Outcome == jepsen.OK:
				okWrites++
			case op.Output.Outcome == jepsen.Unknown:
				unknown++
			case op.Output.Outcome == jepsen.Fail:
				failed++
			}
		}
		t.Logf("jepsen: register: %d operations: %d reads answered, %d not; %d writes acknowledged, %d refused by their check, %d with an unknown outcome; %d refused for a full disk",
			len(history), okReads, lostReads, okWrites, failed, unknown, fullDiskAnswers(history))
		info, err := jepsen.Check(history, timeout)
		if cfg.stale {
			// Not linearizable, and not meant to be: porcupine's verdict is only reported.
			t.Logf("jepsen: register with ?stale reads: porcupine: %v (stale reads are not linearizable)", errOr(err, "linearizable"))
			jc.mu.Lock()
			starts := maps.Clone(jc.starts)
			jc.mu.Unlock()
			err = jepsen.CheckStale(history, starts)
			if err == nil {
				t.Logf("jepsen: register with ?stale reads: every read saw a value written before it returned, never a refused one, and never went back through one server process")
			}
		}
		if err == nil && (okWrites == 0 || okReads == 0) {
			err = fmt.Errorf("the run proves nothing: %d writes acknowledged, %d reads answered", okWrites, okReads)
		}
		r := jepsenResult{name: "register", model: jepsen.RegisterModel, history: history, info: info, err: err}
		if errors.Is(err, jepsen.ErrNotLinearizable) || errors.Is(err, jepsen.ErrCheckTimedOut) {
			r.failing = jepsen.FailingKeys(history, timeout)
		}
		results = append(results, r)
	}
	if on("set") {
		sets := rec.setOps()
		var setAdds, setUnknown, setReads int
		for _, op := range sets {
			switch {
			case op.Add && op.Outcome == jepsen.OK:
				setAdds++
			case op.Add && op.Outcome == jepsen.Unknown:
				setUnknown++
			case !op.Add && op.Outcome == jepsen.OK:
				setReads++
			}
		}
		t.Logf("jepsen: set: %d jobs registered, %d with an unknown outcome, %d listings", setAdds, setUnknown, setReads)
		info, err := jepsen.CheckSet(sets, timeout)
		if err == nil && (setAdds == 0 || setReads == 0) {
			err = fmt.Errorf("the run proves nothing: %d jobs registered, %d listings", setAdds, setReads)
		}
		results = append(results, jepsenResult{name: "set", model: jepsen.SetModel, history: sets, info: info, err: err})
	}
	for _, lw := range lifeWorkloads {
		if !lw.enabled {
			continue
		}
		history := lw.recorded()
		c := lifeCounts(history)
		t.Logf("jepsen: %s: %d created, %d removed, %d with an unknown outcome; reads: %d found, %d not found, %d records found, %d not",
			lw.name, c.created, c.removed, c.unknown, c.found, c.notFound, c.records, c.noRecord)
		info, err := jepsen.CheckLife(lw.model, history, timeout)
		if err == nil && (c.created == 0 || c.removed == 0 || c.found == 0 || c.notFound == 0 || (lw.ops.hasRecord() && c.records == 0)) {
			err = fmt.Errorf("the run proves nothing: %d created, %d removed, %d reads found, %d not found, %d records found",
				c.created, c.removed, c.found, c.notFound, c.records)
		}
		r := jepsenResult{name: lw.name, model: lw.model, history: history, info: info, err: err}
		if errors.Is(err, jepsen.ErrNotLinearizable) || errors.Is(err, jepsen.ErrCheckTimedOut) {
			r.failing = jepsen.FailingObjects(lw.model, history, timeout)
		}
		results = append(results, r)
	}

	failed := final != nil
	for _, r := range results {
		failed = failed || r.err != nil
	}
	if !failed {
		if cfg.stale {
			t.Logf("jepsen: stale reads kept their guarantees (%s)", strings.Join(cfg.workloads, ", "))
			return
		}
		t.Logf("jepsen: linearizable (%s)", strings.Join(cfg.workloads, ", "))
		return
	}
	// Every workload's history and visualisation is saved, the passing ones too: a failure
	// in one is often explained by what another saw at the same moment.
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		t.Errorf("jepsen: %v", err)
	}
	jc.saveLogs(cfg.out)
	var report []string
	if final != nil {
		report = append(report, "recovery: "+final.Error())
	}
	for _, r := range results {
		html, serr := jepsen.Save(cfg.out, r.name, r.model, r.history, r.info, rec.notes())
		if serr != nil {
			html = "saving failed: " + serr.Error()
		}
		verdict := "linearizable"
		if r.err != nil {
			verdict = r.err.Error()
			if n := len(r.failing); n > 10 {
				verdict += fmt.Sprintf(" (%v and %d more)", r.failing[:10], n-10)
			} else if n > 0 {
				verdict += fmt.Sprintf(" (%v)", r.failing)
			}
		}
		report = append(report, fmt.Sprintf("%s: %s; %s", r.name, verdict, html))
	}
	// One line each: make jepsen keeps only the test's own log lines.
	for _, line := range report {
		t.Errorf("jepsen: %s", line)
	}
	t.Fatalf("jepsen: seed %d; server logs in %s", cfg.seed, cfg.out)
}

// jepsenResult is one workload's verdict.
type jepsenResult struct {
	name    string
	model   porcupine.Model
	history any
	info    porcupine.LinearizationInfo
	err     error
	// failing names the keys or objects whose own history fails.
	failing []string
}

// lifeWorkload is the ACL-token or the purge workload: its clients' history and the objects
// they created.
type lifeWorkload struct {
	name        string
	ops         lifeOps
	model       porcupine.Model
	firstClient int
	enabled     bool
	mu          sync.Mutex
	history     []jepsen.LifeOp
	objs        []*lifeObject
}

func (lw *lifeWorkload) add(op jepsen.LifeOp) {
	lw.mu.Lock()
	lw.history = append(lw.history, op)
	lw.mu.Unlock()
}

func (lw *lifeWorkload) recorded() []jepsen.LifeOp {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]jepsen.LifeOp(nil), lw.history...)
}

type lifeCount struct{ created, removed, unknown, found, notFound, records, noRecord int }

func lifeCounts(history []jepsen.LifeOp) lifeCount {
	var c lifeCount
	for _, op := range history {
		switch {
		case op.Outcome == jepsen.Unknown && (op.Kind == jepsen.Create || op.Kind == jepsen.Remove):
			c.unknown++
		case op.Outcome != jepsen.OK:
		case op.Kind == jepsen.Create:
			c.created++
		case op.Kind == jepsen.Remove:
			c.removed++
		case op.Kind == jepsen.ReadObject && op.Found:
			c.found++
		case op.Kind == jepsen.ReadObject:
			c.notFound++
		case op.Kind == jepsen.ReadRecord && op.Found:
			c.records++
		case op.Kind == jepsen.ReadRecord:
			c.noRecord++
		}
	}
	return c
}

// fullDiskAnswers counts the writes refused for a full disk. A 507 is jepsen.Refused: refused
// before Raft, so it did not happen, and the checker holds the servers to it.
func fullDiskAnswers(history []jepsen.Op) int {
	n := 0
	for _, op := range history {
		if strings.Contains(op.Err, "no space left on device") {
			n++
		}
	}
	return n
}

type jepsenConfig struct {
	duration time.Duration
	servers  int
	seed     int64
	out      string
	stale    bool
	// workloads run together in one cluster.
	workloads []string
	// faults are the nemesis's kinds to choose from.
	faults []string
}

func jepsenSettings(t *testing.T) jepsenConfig {
	c := jepsenConfig{duration: 30 * time.Second, servers: 3, seed: time.Now().UnixNano()}
	if v := os.Getenv("JEPSEN_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		must.NoError(t, err, must.Sprint("JEPSEN_TIME must be a duration such as 30s or 10m"))
		c.duration = d
	}
	if v := os.Getenv("JEPSEN_SERVERS"); v != "" {
		n, err := strconv.Atoi(v)
		must.True(t, err == nil && (n == 3 || n == 5), must.Sprintf("JEPSEN_SERVERS must be 3 or 5, not %q", v))
		c.servers = n
	}
	if v := os.Getenv("JEPSEN_SEED"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		must.NoError(t, err, must.Sprint("JEPSEN_SEED must be an integer"))
		c.seed = n
	}
	switch v := os.Getenv("JEPSEN_READS"); v {
	case "", "default":
	case "stale":
		c.stale = true
	default:
		t.Fatalf("JEPSEN_READS must be default or stale, not %q", v)
	}
	c.workloads = []string{"register", "set", "acl", "purge"}
	if c.stale {
		// The stale model (jepsen.CheckStale) is the register's only.
		c.workloads = []string{"register"}
		if v := os.Getenv("JEPSEN_WORKLOAD"); v != "" && v != "register" {
			t.Fatalf("JEPSEN_READS=stale checks the register workload only, not JEPSEN_WORKLOAD=%q", v)
		}
	}
	if v := os.Getenv("JEPSEN_WORKLOAD"); v != "" {
		c.workloads = nil
		for _, w := range strings.Split(v, ",") {
			w = strings.TrimSpace(w)
			must.True(t, slices.Contains([]string{"register", "set", "acl", "purge"}, w),
				must.Sprintf("JEPSEN_WORKLOAD is a comma-separated list of register, set, acl and purge, not %q", v))
			if !slices.Contains(c.workloads, w) {
				c.workloads = append(c.workloads, w)
			}
		}
	}
	c.faults = nemesisKinds
	if v := os.Getenv("JEPSEN_FAULTS"); v != "" {
		c.faults = nil
		for _, f := range strings.Split(v, ",") {
			f = strings.TrimSpace(f)
			must.True(t, slices.Contains(nemesisKinds, f), must.Sprintf("JEPSEN_FAULTS is a comma-separated list of %s, not %q", strings.Join(nemesisKinds, ", "), v))
			c.faults = append(c.faults, f)
		}
	}
	c.out = os.Getenv("JEPSEN_OUT")
	if c.out == "" {
		c.out = filepath.Join(os.TempDir(), fmt.Sprintf("nomad-jepsen-%d", c.seed))
	}
	return c
}

// jepsenCluster is n servers, each on its own lab host, with plain HTTP: the suite checks
// consistency, which TLS does not change, and plain HTTP keeps the clients simple.
type jepsenCluster struct {
	t       *testing.T
	lab     *netLab
	bin     string
	servers []*labHost
	configs map[string]string // config file path by host name
	logs    map[string]*os.File
	mu      sync.Mutex
	procs   map[string]*exec.Cmd // the running process by host name; nil when killed
	paused  map[string]bool
	http    *http.Client
	// dataDirs are the servers' data dirs by host name, each a tmpfs of its own so the
	// nemesis can fill one; fillers are the files filling them, by host name.
	dataDirs map[string]string
	fillers  map[string]string
	// token is the management token every request carries (ACLs are on: the ACL workload
	// creates and deletes tokens).
	token string
	// stale makes reads ?stale (JEPSEN_READS=stale): any server answers from its own state,
	// which is not linearizable; the register's history is checked with jepsen.CheckStale.
	stale bool
	// clock is the history's clock once the workload starts; starts are the times, on it, each
	// server process was started (the stale-read check compares reads within one process).
	clock  func() int64
	starts map[string][]int64
	// delayers hold back the servers' packets during a packet-delay fault, by host name.
	delayers map[string]*netfault.Delayer
}

func newJepsenCluster(t *testing.T, n int) *jepsenCluster {
	_, err := exec.LookPath("iptables")
	must.NoError(t, err, must.Sprint("the Jepsen-style suite partitions hosts with iptables (apt-get install iptables)"))
	lab := newLab(t)
	jc := &jepsenCluster{
		t: t, lab: lab, bin: binary(t), configs: map[string]string{}, logs: map[string]*os.File{},
		procs: map[string]*exec.Cmd{}, paused: map[string]bool{},
		dataDirs: map[string]string{}, fillers: map[string]string{}, delayers: map[string]*netfault.Delayer{},
	}
	// Every request has a deadline: a paused or cut-off server must not hold a client
	// forever, and a write that runs out of time has an unknown outcome.
	jc.http = &http.Client{Timeout: 5 * time.Second, Transport: &tokenTransport{jc: jc, next: &http.Transport{MaxIdleConnsPerHost: 16}}}
	t.Cleanup(jc.http.CloseIdleConnections)
	for i := 1; i <= n; i++ {
		jc.servers = append(jc.servers, lab.host(fmt.Sprintf("s%d", i), 10+i))
	}
	dir := t.TempDir()
	for _, h := range jc.servers {
		// A tmpfs of its own: room for the log's 64 MiB segments and the full-disk margin
		// (88 MiB), small enough to fill in one call.
		jc.dataDirs[h.name] = diskTmpfs(t, "256m")
	}
	for _, h := range jc.servers {
		var joins []string
		for _, o := range jc.servers {
			if o != h {
				joins = append(joins, fmt.Sprintf("%q", fmt.Sprintf("%s:%d", o.ip, labJoinPort)))
			}
		}
		cfg := fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = %q
log_level = "DEBUG"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
server {
  enabled          = true
  bootstrap_expect = %d
  retry_join       = [%s]
  encrypt          = %q
  # Snapshots every second or so under the workload, and a short log behind them: a server
  # down for a few seconds comes back to an InstallSnapshot, and kills land mid-snapshot.
  raft_snapshot_threshold = 128
  raft_snapshot_interval  = "500ms"
  raft_trailing_logs      = 64
}
acl {
  enabled = true
}
`, h.name, jc.dataDirs[h.name], h.ip, labHTTP, labRPC, labSerf, n, strings.Join(joins, ", "), e2eClusterKey)
		path := filepath.Join(dir, h.name+".hcl")
		must.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
		jc.configs[h.name] = path
		f, err := os.Create(filepath.Join(dir, h.name+".log"))
		must.NoError(t, err)
		jc.logs[h.name] = f
		must.NoError(t, jc.start(h))
	}
	t.Cleanup(func() {
		jc.mu.Lock()
		defer jc.mu.Unlock()
		for name, cmd := range jc.procs {
			if cmd != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
			_ = jc.logs[name].Close()
		}
	})
	waitUntil(t, 60*time.Second, "a leader with every server a peer", func() bool {
		l := jc.leader()
		if l == nil {
			return false
		}
		var peers []string
		return jc.getJSON(l, "/v1/status/peers", &peers) == nil && len(peers) == n
	})
	waitUntil(t, 30*time.Second, "the ACL bootstrap", func() bool {
		l := jc.leader()
		if l == nil {
			return false
		}
		var tok struct{ SecretID string }
		if err := jc.postJSON(l, "/v1/acl/bootstrap", nil, &tok); err != nil || tok.SecretID == "" {
			return false
		}
		jc.mu.Lock()
		jc.token = tok.SecretID
		jc.mu.Unlock()
		return true
	})
	return jc
}

// tokenTransport puts the management token on every request once there is one.
type tokenTransport struct {
	jc   *jepsenCluster
	next http.RoundTripper
}

func (tt *tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tt.jc.mu.Lock()
	tok := tt.jc.token
	tt.jc.mu.Unlock()
	if tok != "" {
		r = r.Clone(r.Context())
		r.Header.Set("X-Nomad-Token", tok)
	}
	return tt.next.RoundTrip(r)
}

func (tt *tokenTransport) CloseIdleConnections() {
	if c, ok := tt.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// postJSON sends body (nil: none) and decodes a 200 answer into out.
func (jc *jepsenCluster) postJSON(h *labHost, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		buf, _ := json.Marshal(body)
		rd = strings.NewReader(string(buf))
	}
	resp, err := jc.http.Post(jc.url(h, path), "application/json", rd)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		text, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %d %s", path, resp.StatusCode, strings.TrimSpace(string(text)))
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// start runs the host's agent; `ip netns exec` execs the binary in place, so the process is
// the agent itself and signals reach it.
func (jc *jepsenCluster) start(h *labHost) error {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	cmd := exec.Command("ip", "netns", "exec", h.ns, jc.bin, "agent", "-config", jc.configs[h.name])
	cmd.Stdout, cmd.Stderr = jc.logs[h.name], jc.logs[h.name]
	if err := cmd.Start(); err != nil {
		return err
	}
	fmt.Fprintf(jc.logs[h.name], "\n===== jepsen: started pid %d =====\n", cmd.Process.Pid)
	if jc.clock != nil {
		if jc.starts == nil {
			jc.starts = map[string][]int64{}
		}
		jc.starts[h.name] = append(jc.starts[h.name], jc.clock())
	}
	jc.procs[h.name] = cmd
	jc.paused[h.name] = false
	return nil
}

func (jc *jepsenCluster) kill(h *labHost) {
	jc.mu.Lock()
	cmd := jc.procs[h.name]
	jc.procs[h.name] = nil
	jc.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

func (jc *jepsenCluster) signal(h *labHost, sig syscall.Signal) {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	if cmd := jc.procs[h.name]; cmd != nil {
		_ = cmd.Process.Signal(sig)
		jc.paused[h.name] = sig == syscall.SIGSTOP
	}
}

func (jc *jepsenCluster) alive(h *labHost) bool {
	jc.mu.Lock()
	defer jc.mu.Unlock()
	return jc.procs[h.name] != nil && !jc.paused[h.name]
}

// iptables runs iptables inside the host's namespace.
func iptablesIn(h *labHost, args ...string) error {
	out, err := exec.Command("ip", append([]string{"netns", "exec", h.ns, "iptables"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s in %s: %v: %s", strings.Join(args, " "), h.name, err, out)
	}
	return nil
}

// partition drops all traffic between the two sides, in both directions, on both sides. The
// test's own leg (10.231.7.254) stays reachable, so clients still reach every server: a
// server in the minority keeps answering HTTP, and must refuse what it cannot know.
func (jc *jepsenCluster) partition(a, b []*labHost) error {
	for _, x := range a {
		for _, y := range b {
			for _, pair := range [][2]*labHost{{x, y}, {y, x}} {
				if err := iptablesIn(pair[0], "-A", "INPUT", "-s", pair[1].ip, "-j", "DROP"); err != nil {
					return err
				}
				if err := iptablesIn(pair[0], "-A", "OUTPUT", "-d", pair[1].ip, "-j", "DROP"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// healAll ends every fault: the network whole, the disks freed, every process running and
// resumed.
func (jc *jepsenCluster) healAll() {
	if _, err := jc.healNetwork(); err != nil {
		jc.t.Errorf("heal: %v", err)
	}
	for _, h := range jc.servers {
		if err := jc.freeDisk(h); err != nil {
			jc.t.Errorf("heal: %v", err)
		}
		jc.mu.Lock()
		cmd := jc.procs[h.name]
		jc.mu.Unlock()
		if cmd == nil {
			if err := jc.start(h); err != nil {
				jc.t.Errorf("heal: restart %s: %v", h.name, err)
			}
		} else {
			jc.signal(h, syscall.SIGCONT)
		}
	}
}

func (jc *jepsenCluster) url(h *labHost, path string) string {
	return fmt.Sprintf("http://%s:%d%s", h.ip, labHTTP, path)
}

func (jc *jepsenCluster) getJSON(h *labHost, path string, out any) error {
	resp, err := jc.http.Get(jc.url(h, path))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %d", path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// leader is the server host some live server names as leader, or nil.
func (jc *jepsenCluster) leader() *labHost {
	for _, s := range jc.servers {
		if !jc.alive(s) {
			continue
		}
		var addr string
		if jc.getJSON(s, "/v1/status/leader", &addr) != nil || addr == "" {
			continue
		}
		for _, c := range jc.servers {
			if addr == fmt.Sprintf("%s:%d", c.ip, labRPC) {
				return c
			}
		}
	}
	return nil
}

// jepsenVar is the part of a variable the suite reads.
type jepsenVar struct {
	Items       map[string]string
	ModifyIndex uint64
}

// read is a default read of jepsen/<key> through h: ok is false when it did not answer
// (an error, a timeout), which tells nothing about the register.
func (jc *jepsenCluster) read(h *labHost, key string) (value string, index uint64, ok bool, errText string) {
	path := "/v1/var/jepsen/" + key
	if jc.stale {
		path += "?stale"
	}
	resp, err := jc.http.Get(jc.url(h, path))
	if err != nil {
		return "", 0, false, err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", 0, false, err.Error()
	}
	switch resp.StatusCode {
	case 200:
		var v jepsenVar
		if err := json.Unmarshal(body, &v); err != nil {
			return "", 0, false, err.Error()
		}
		return v.Items["v"], v.ModifyIndex, true, ""
	case 404:
		if strings.Contains(string(body), "not found") {
			return "", 0, true, ""
		}
	}
	return "", 0, false, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

// refusedUnchecked reports whether an answer refuses a write before anything was checked or
// written: a full disk (507) or a leader still applying the log it was elected with. Such a
// write did not happen and says nothing about the value (jepsen.Refused), unlike a 4xx.
func refusedUnchecked(status int, body []byte) bool {
	return status == http.StatusInsufficientStorage ||
		status == http.StatusInternalServerError && strings.HasPrefix(string(body), "Not ready to serve consistent reads")
}

// cas writes value to jepsen/<key> if its ModifyIndex is still index (0: it must not exist).
// Only a 409 (the check refused it), another 4xx, or a refusal before any check
// (refusedUnchecked) is a write that did not happen; a timeout,
// a broken connection, a 500 "write outcome unknown" and any other 5xx may have happened
// (a follower that forwarded the write cannot know whether the leader applied it).
func (jc *jepsenCluster) cas(h *labHost, key string, index uint64, value string) (jepsen.Outcome, string) {
	body, _ := json.Marshal(map[string]any{"Items": map[string]string{"v": value}})
	req, err := http.NewRequest(http.MethodPut, jc.url(h, "/v1/var/jepsen/"+key+"?cas="+strconv.FormatUint(index, 10)), strings.NewReader(string(body)))
	if err != nil {
		return jepsen.Unknown, err.Error()
	}
	resp, err := jc.http.Do(req)
	if err != nil {
		return jepsen.Unknown, err.Error()
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == 200:
		return jepsen.OK, ""
	case refusedUnchecked(resp.StatusCode, text):
		return jepsen.Refused, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return jepsen.Fail, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
	}
	return jepsen.Unknown, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
}

// worker reads a random key through a random server and, most of the time, writes a new
// value to it through another random server with the index it read as the check.
func (jc *jepsenCluster) worker(ctx context.Context, rec *jepsenRecorder, id int, rng *rand.Rand, keys []string) {
	n := 0
	for ctx.Err() == nil {
		key := keys[rng.Intn(len(keys))]
		s := jc.servers[rng.Intn(len(jc.servers))]
		call := rec.now()
		val, idx, ok, errText := jc.read(s, key)
		out := jepsen.RegisterOutput{Outcome: jepsen.OK, Value: val, Index: idx}
		if !ok {
			out.Outcome = jepsen.Unknown
		}
		rec.add(jepsen.Op{Client: id, Server: s.name, Input: jepsen.RegisterInput{Key: key, Kind: jepsen.Read}, Output: out, Call: call, Return: rec.now(), Err: errText})
		if !ok {
			// A server that does not answer: do not spin on it.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if rng.Intn(10) < 3 {
			continue
		}
		n++
		next := fmt.Sprintf("c%d-%d", id, n)
		s = jc.servers[rng.Intn(len(jc.servers))]
		call = rec.now()
		outcome, errText := jc.cas(s, key, idx, next)
		rec.add(jepsen.Op{Client: id, Server: s.name, Input: jepsen.RegisterInput{Key: key, Kind: jepsen.CAS, Old: val, New: next},
			Output: jepsen.RegisterOutput{Outcome: outcome}, Call: call, Return: rec.now(), Err: errText})
	}
}

// finalReads reads every key through every server once the faults are over; each must answer
// within limit (the cluster recovers by itself), and the reads join the history.
func (jc *jepsenCluster) finalReads(rec *jepsenRecorder, keys []string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for i, s := range jc.servers {
		for _, key := range keys {
			for {
				call := rec.now()
				val, idx, ok, errText := jc.read(s, key)
				if ok {
					rec.add(jepsen.Op{Client: 1000 + i, Server: s.name, Input: jepsen.RegisterInput{Key: key, Kind: jepsen.Read},
						Output: jepsen.RegisterOutput{Outcome: jepsen.OK, Value: val, Index: idx}, Call: call, Return: rec.now()})
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("after healing, %s did not answer a read of %s within %s: %s", s.name, key, limit, errText)
				}
				time.Sleep(250 * time.Millisecond)
			}
		}
	}
	return nil
}

// register registers the job id (a service job of count 0: nothing to place) through h.
func (jc *jepsenCluster) register(h *labHost, id string) (jepsen.Outcome, string) {
	body, _ := json.Marshal(map[string]any{"Job": sleepJob(id, 0)})
	req, err := http.NewRequest(http.MethodPut, jc.url(h, "/v1/jobs"), strings.NewReader(string(body)))
	if err != nil {
		return jepsen.Unknown, err.Error()
	}
	resp, err := jc.http.Do(req)
	if err != nil {
		return jepsen.Unknown, err.Error()
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == 200:
		return jepsen.OK, ""
	case refusedUnchecked(resp.StatusCode, text):
		return jepsen.Refused, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return jepsen.Fail, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
	}
	return jepsen.Unknown, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
}

// listJobs lists the set workload's jobs through h (a default read unless stale).
func (jc *jepsenCluster) listJobs(h *labHost) ([]string, bool, string) {
	path := "/v1/jobs?prefix=set-"
	if jc.stale {
		path += "&stale"
	}
	var stubs []struct{ ID string }
	if err := jc.getJSON(h, path, &stubs); err != nil {
		return nil, false, err.Error()
	}
	ids := make([]string, 0, len(stubs))
	for _, j := range stubs {
		ids = append(ids, j.ID)
	}
	return ids, true, ""
}

// setWorker registers new jobs and lists them, through random servers.
func (jc *jepsenCluster) setWorker(ctx context.Context, rec *jepsenRecorder, id int, rng *rand.Rand) {
	n := 0
	for ctx.Err() == nil {
		s := jc.servers[rng.Intn(len(jc.servers))]
		call := rec.now()
		if rng.Intn(2) == 0 {
			n++
			elem := fmt.Sprintf("set-%d-%d", id, n)
			outcome, errText := jc.register(s, elem)
			rec.addSet(jepsen.SetOp{Client: id, Server: s.name, Add: true, Element: elem, Outcome: outcome, Call: call, Return: rec.now(), Err: errText})
			continue
		}
		ids, ok, errText := jc.listJobs(s)
		op := jepsen.SetOp{Client: id, Server: s.name, Elements: ids, Outcome: jepsen.OK, Call: call, Return: rec.now(), Err: errText}
		if !ok {
			op.Outcome = jepsen.Unknown
		}
		rec.addSet(op)
		if !ok {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// finalLists lists the jobs through every server once the faults are over.
func (jc *jepsenCluster) finalLists(rec *jepsenRecorder, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for i, s := range jc.servers {
		for {
			call := rec.now()
			ids, ok, errText := jc.listJobs(s)
			if ok {
				rec.addSet(jepsen.SetOp{Client: 1000 + i, Server: s.name, Elements: ids, Outcome: jepsen.OK, Call: call, Return: rec.now()})
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("after healing, %s did not list the jobs within %s: %s", s.name, limit, errText)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return nil
}

// saveLogs copies every server's log into dir.
func (jc *jepsenCluster) saveLogs(dir string) {
	for name, f := range jc.logs {
		_ = f.Sync()
		buf, err := os.ReadFile(f.Name())
		if err == nil {
			_ = os.WriteFile(filepath.Join(dir, name+".log"), buf, 0o644)
		}
	}
}

// jepsenRecorder is the history, appended to by every client; times are nanoseconds since
// the run began.
type jepsenRecorder struct {
	start   time.Time
	mu      sync.Mutex
	history []jepsen.Op
	sets    []jepsen.SetOp
	faults  []porcupine.Annotation
}

func (r *jepsenRecorder) addSet(op jepsen.SetOp) {
	r.mu.Lock()
	r.sets = append(r.sets, op)
	r.mu.Unlock()
}

func (r *jepsenRecorder) setOps() []jepsen.SetOp {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]jepsen.SetOp(nil), r.sets...)
}

func (r *jepsenRecorder) now() int64 { return int64(time.Since(r.start)) }

func (r *jepsenRecorder) add(op jepsen.Op) {
	r.mu.Lock()
	r.history = append(r.history, op)
	r.mu.Unlock()
}

func (r *jepsenRecorder) fault(desc string, start, end int64) {
	r.mu.Lock()
	r.faults = append(r.faults, porcupine.Annotation{Tag: "nemesis", Start: start, End: end, Description: desc, BackgroundColor: "#f4cccc"})
	r.mu.Unlock()
}

func (r *jepsenRecorder) ops() []jepsen.Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]jepsen.Op(nil), r.history...)
}

func (r *jepsenRecorder) notes() []porcupine.Annotation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]porcupine.Annotation(nil), r.faults...)
}

// errOr is err's text, or ok when err is nil.
func errOr(err error, ok string) string {
	if err == nil {
		return ok
	}
	return err.Error()
}
