//go:build e2e && e2ecluster

package e2e

import (
	"context"
	"encoding/json"
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

	"github.com/anishathalye/porcupine"
	"github.com/nomadfork/nomad/internal/jepsen"
	"github.com/shoenig/test/must"
)

// TestJepsen is the Jepsen-style suite (`make jepsen`): clients read and check-and-set
// variables through every server of a 3- or 5-server cluster while a nemesis kills, pauses
// and partitions servers; the recorded history must be linearizable (porcupine). Settings
// come from the environment: JEPSEN_TIME (how long the workload runs, default 30s),
// JEPSEN_SERVERS (3 or 5), JEPSEN_SEED (the nemesis's and the clients' random choices) and
// JEPSEN_OUT (where a failing run leaves its history, visualisation and server logs);
// JEPSEN_READS=stale reads with ?stale instead, a run that must fail.
func TestJepsen(t *testing.T) {
	cfg := jepsenSettings(t)
	t.Logf("jepsen: %d servers, %s, seed %d, stale reads %v, failures saved under %s", cfg.servers, cfg.duration, cfg.seed, cfg.stale, cfg.out)
	jc := newJepsenCluster(t, cfg.servers)
	jc.stale = cfg.stale
	rec := &jepsenRecorder{start: time.Now()}
	keys := []string{"k1", "k2", "k3", "k4"}

	ctx, stopWorkload := context.WithCancel(context.Background())
	var clients sync.WaitGroup
	const workers = 6
	for w := 0; w < workers; w++ {
		clients.Add(1)
		go func(w int) {
			defer clients.Done()
			jc.worker(ctx, rec, w, rand.New(rand.NewSource(cfg.seed+int64(w)+1)), keys)
		}(w)
	}
	// The set workload: jobs registered and listed.
	const setWorkers = 2
	for w := 0; w < setWorkers; w++ {
		clients.Add(1)
		go func(w int) {
			defer clients.Done()
			jc.setWorker(ctx, rec, 100+w, rand.New(rand.NewSource(cfg.seed+int64(100+w))))
		}(w)
	}
	nem := &nemesis{jc: jc, rec: rec, rng: rand.New(rand.NewSource(cfg.seed))}
	nemCtx, stopNemesis := context.WithCancel(context.Background())
	nemDone := make(chan struct{})
	go func() { defer close(nemDone); nem.run(nemCtx) }()

	time.Sleep(cfg.duration)
	stopNemesis()
	<-nemDone
	stopWorkload()
	clients.Wait()

	// Everything healed by the nemesis on its way out; the cluster must come back by itself.
	jc.healAll()
	final := jc.finalReads(rec, keys, 90*time.Second)
	if final == nil {
		final = jc.finalLists(rec, 90*time.Second)
	}

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
	t.Logf("jepsen: %d operations: %d reads answered, %d not; %d writes acknowledged, %d refused by their check, %d with an unknown outcome; faults: %s",
		len(history), okReads, lostReads, okWrites, failed, unknown, nem.summary())
	timeout := time.Minute
	if cfg.duration > timeout {
		timeout = cfg.duration
	}
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

	info, err := jepsen.Check(history, timeout)
	setInfo, setErr := jepsen.CheckSet(sets, timeout)
	if err == nil && final != nil {
		err = final
	}
	if err == nil && (okWrites == 0 || okReads == 0 || setAdds == 0 || setReads == 0) {
		err = fmt.Errorf("the run proves nothing: %d writes acknowledged, %d reads answered, %d jobs registered, %d listings",
			okWrites, okReads, setAdds, setReads)
	}
	if err != nil || setErr != nil {
		html, serr := jepsen.Save(cfg.out, "register", jepsen.RegisterModel, history, info, rec.notes())
		setHTML, serr2 := jepsen.Save(cfg.out, "set", jepsen.SetModel, sets, setInfo, rec.notes())
		jc.saveLogs(cfg.out)
		if serr == nil {
			serr = serr2
		}
		if serr != nil {
			t.Fatalf("jepsen: register: %v; set: %v (saving the histories failed too: %v)", err, setErr, serr)
		}
		var failing []string
		if err != nil {
			failing = jepsen.FailingKeys(history, timeout)
		}
		t.Fatalf("jepsen: register: %v (keys: %v); set: %v; seed %d; histories and visualisations: %s, %s (server logs beside them)",
			err, failing, setErr, cfg.seed, html, setHTML)
	}
	t.Logf("jepsen: linearizable")
}

type jepsenConfig struct {
	duration time.Duration
	servers  int
	seed     int64
	out      string
	stale    bool
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
	// stale makes reads ?stale (JEPSEN_READS=stale): any server answers from its own state,
	// which is not linearizable, so the run must fail; it shows the checker catching it.
	stale bool
}

func newJepsenCluster(t *testing.T, n int) *jepsenCluster {
	_, err := exec.LookPath("iptables")
	must.NoError(t, err, must.Sprint("the Jepsen-style suite partitions hosts with iptables (apt-get install iptables)"))
	lab := newLab(t)
	jc := &jepsenCluster{
		t: t, lab: lab, bin: binary(t), configs: map[string]string{}, logs: map[string]*os.File{},
		procs: map[string]*exec.Cmd{}, paused: map[string]bool{},
		// Every request has a deadline: a paused or cut-off server must not hold a client
		// forever, and a write that runs out of time has an unknown outcome.
		http: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}},
	}
	t.Cleanup(jc.http.CloseIdleConnections)
	for i := 1; i <= n; i++ {
		jc.servers = append(jc.servers, lab.host(fmt.Sprintf("s%d", i), 10+i))
	}
	dir := t.TempDir()
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
}
`, h.name, filepath.Join(dir, h.name+"-data"), h.ip, labHTTP, labRPC, labSerf, n, strings.Join(joins, ", "), e2eClusterKey)
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
	return jc
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

// healAll ends every fault: the network whole, every process running and resumed.
func (jc *jepsenCluster) healAll() {
	for _, h := range jc.servers {
		if err := iptablesIn(h, "-F"); err != nil {
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

// cas writes value to jepsen/<key> if its ModifyIndex is still index (0: it must not exist).
// Only a 409 (the check refused it) or another 4xx is a write that did not happen; a timeout,
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
		out := jepsen.RegisterOutput{Outcome: jepsen.OK, Value: val}
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
				val, _, ok, errText := jc.read(s, key)
				if ok {
					rec.add(jepsen.Op{Client: 1000 + i, Server: s.name, Input: jepsen.RegisterInput{Key: key, Kind: jepsen.Read},
						Output: jepsen.RegisterOutput{Outcome: jepsen.OK, Value: val}, Call: call, Return: rec.now()})
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

// nemesis injects one fault at a time, holds it a few seconds, heals it and rests, until
// stopped; it heals whatever it holds before returning.
type nemesis struct {
	jc    *jepsenCluster
	rec   *jepsenRecorder
	rng   *rand.Rand
	count map[string]int
}

func (n *nemesis) summary() string {
	var parts []string
	for _, k := range []string{"kill leader", "kill random", "pause leader", "pause random", "isolate leader", "majority/minority"} {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, n.count[k]))
	}
	return strings.Join(parts, ", ")
}

// target is the leader when asked and one is known, else a random server.
func (n *nemesis) target(leader bool) *labHost {
	if leader {
		if l := n.jc.leader(); l != nil {
			return l
		}
	}
	return n.jc.servers[n.rng.Intn(len(n.jc.servers))]
}

func (n *nemesis) run(ctx context.Context) {
	n.count = map[string]int{}
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	kinds := []string{"kill leader", "kill random", "pause leader", "pause random", "isolate leader", "majority/minority"}
	for sleep(time.Duration(1000+n.rng.Intn(1500)) * time.Millisecond) {
		kind := kinds[n.rng.Intn(len(kinds))]
		start := n.rec.now()
		var heal func()
		var desc string
		switch kind {
		case "kill leader", "kill random":
			h := n.target(kind == "kill leader")
			n.jc.kill(h)
			desc = "kill -9 " + h.name
			heal = func() {
				if err := n.jc.start(h); err != nil {
					n.jc.t.Errorf("nemesis: restart %s: %v", h.name, err)
				}
			}
		case "pause leader", "pause random":
			h := n.target(kind == "pause leader")
			n.jc.signal(h, syscall.SIGSTOP)
			desc = "SIGSTOP " + h.name
			heal = func() { n.jc.signal(h, syscall.SIGCONT) }
		case "isolate leader", "majority/minority":
			var minority, majority []*labHost
			if kind == "isolate leader" {
				l := n.target(true)
				minority = []*labHost{l}
				for _, s := range n.jc.servers {
					if s != l {
						majority = append(majority, s)
					}
				}
			} else {
				perm := n.rng.Perm(len(n.jc.servers))
				for i, p := range perm {
					if i < len(perm)/2 {
						minority = append(minority, n.jc.servers[p])
					} else {
						majority = append(majority, n.jc.servers[p])
					}
				}
			}
			if err := n.jc.partition(minority, majority); err != nil {
				n.jc.t.Errorf("nemesis: %v", err)
			}
			desc = fmt.Sprintf("partition %s | %s", hostNames(minority), hostNames(majority))
			heal = func() {
				for _, s := range n.jc.servers {
					if err := iptablesIn(s, "-F"); err != nil {
						n.jc.t.Errorf("nemesis: %v", err)
					}
				}
			}
		}
		n.count[kind]++
		n.jc.t.Logf("nemesis: %s", desc)
		sleep(time.Duration(2500+n.rng.Intn(2500)) * time.Millisecond)
		heal()
		n.rec.fault(desc, start, n.rec.now())
	}
}

func hostNames(hs []*labHost) string {
	var names []string
	for _, h := range hs {
		names = append(names, h.name)
	}
	return strings.Join(names, ",")
}
