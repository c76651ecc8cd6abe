//go:build e2e

package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// sinkReceiver is a webhook receiver that can fail, go away and come back on one address.
type sinkReceiver struct {
	t      *testing.T
	addr   string
	secret string

	mu       sync.Mutex
	srv      *http.Server
	failNext int // answer 500 to this many more requests
	requests int
	badSigs  int
	purges   map[string]sinkPurge // job ID -> the purge as delivered
	gaps     int
}

type sinkPurge struct {
	Purge bool
	Actor *struct{ AccessorID, Name, Type string }
}

func newSinkReceiver(t *testing.T, secret string) *sinkReceiver {
	r := &sinkReceiver{t: t, addr: fmt.Sprintf("127.0.0.1:%d", freePort(t)), secret: secret, purges: map[string]sinkPurge{}}
	t.Cleanup(r.down)
	return r
}

func (r *sinkReceiver) up() {
	l, err := net.Listen("tcp", r.addr)
	must.NoError(r.t, err)
	srv := &http.Server{Handler: r}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

func (r *sinkReceiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (r *sinkReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	mac := hmac.New(sha256.New, []byte(r.secret))
	mac.Write(body)
	valid := req.Header.Get("X-Nomad-Signature") == "sha256="+hex.EncodeToString(mac.Sum(nil))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if !valid {
		r.badSigs++
	}
	if r.failNext > 0 {
		r.failNext--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	var batch struct {
		Index  uint64
		Events []struct {
			Topic, Type string
			Payload     json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &batch); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, e := range batch.Events {
		switch {
		case e.Topic == "Sink" && e.Type == "EventsLost":
			r.gaps++
		case e.Topic == "Job" && e.Type == "JobDeregistered":
			var p struct {
				sinkPurge
				Job struct{ ID string }
			}
			if json.Unmarshal(e.Payload, &p) == nil && p.Purge {
				r.purges[p.Job.ID] = p.sinkPurge
			}
		}
	}
}

func (r *sinkReceiver) state() (purges map[string]sinkPurge, requests, badSigs, gaps int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	purges = map[string]sinkPurge{}
	for k, v := range r.purges {
		purges[k] = v
	}
	return purges, r.requests, r.badSigs, r.gaps
}

// waitPurges waits until the receiver holds a purge of each job in ids.
func (r *sinkReceiver) waitPurges(ids []string, timeout time.Duration) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, _, _, _ := r.state()
		var missing []string
		for _, id := range ids {
			if _, ok := got[id]; !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("purges never delivered: %v", missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestEventSink_PurgesSurviveKill9: a webhook receiver that fails at first, then goes away
// while jobs are purged (more batches than the event buffer holds), with the server killed -9
// mid-way and restarted on its data dir, then comes back: every purge arrives, with Purge and
// the actor, and every delivery's signature verifies.
func TestEventSink_PurgesSurviveKill9(t *testing.T) {
	const secret = "e2e-sink-secret-0123456789"
	dataDir := t.TempDir()
	config, url := writeConfig(t, dataDir, "acl { enabled = true }")
	// A buffer of four batches: the receiver's absence below outlasts it many times over.
	raw, err := os.ReadFile(config)
	must.NoError(t, err)
	patched := strings.Replace(string(raw), "bootstrap_expect = 1\n", "bootstrap_expect = 1\n  event_buffer_size = 4\n", 1)
	must.NotEq(t, string(raw), patched)
	must.NoError(t, os.WriteFile(config, []byte(patched), 0o600))
	agent := startAgent(t, config, url)

	out, code := cli(t, url, "", "acl", "bootstrap", "-json")
	must.Eq(t, 0, code, must.Sprint(out))
	var boot struct{ SecretID, AccessorID string }
	must.NoError(t, json.Unmarshal([]byte(out), &boot))
	mgmt := boot.SecretID

	rcv := newSinkReceiver(t, secret)
	rcv.failNext = 3
	rcv.up()

	sinkFile := writeFile(t, "sink.hcl", fmt.Sprintf(`
id      = "purge-alerts"
type    = "webhook"
address = "http://%s/nomad"
topics  = { Job = ["*"] }
filter  = "Type == \"JobDeregistered\" and Payload.Purge == true"
secret  = %q
`, rcv.addr, secret))
	out, code = cli(t, url, mgmt, "event", "sink", "register", sinkFile)
	must.Eq(t, 0, code, must.Sprint(out))

	// Without a token the routes are refused.
	out, code = cli(t, url, "", "event", "sink", "list")
	must.Eq(t, 1, code, must.Sprint(out))
	must.StrContains(t, out, "Permission denied")

	c := agent.client()
	c.SetSecretID(mgmt)
	var all []string
	purgeJobs := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			id := fmt.Sprintf("purged-%02d", i)
			_, _, err := c.Jobs().Register(testJob(id), nil)
			must.NoError(t, err)
			_, _, err = c.Jobs().Deregister(id, true, nil)
			must.NoError(t, err)
			all = append(all, id)
			// Writes the sink does not select, to push the purges out of the small buffer.
			for j := 0; j < 3; j++ {
				_, _, err := c.Jobs().Register(testJob(fmt.Sprintf("filler-%02d-%d", i, j)), nil)
				must.NoError(t, err)
			}
		}
	}

	// The receiver fails its first three deliveries; the purges still arrive, in order.
	purgeJobs(0, 3)
	rcv.waitPurges(all, 60*time.Second)

	// The receiver goes away; purges keep coming, far more batches than the buffer holds.
	rcv.down()
	purgeJobs(3, 8)
	// The server is killed without warning mid-way and restarted on its data dir.
	agent.kill9()
	agent = startAgent(t, config, url)
	c = agent.client()
	c.SetSecretID(mgmt)
	purgeJobs(8, 11)

	out, code = cli(t, url, mgmt, "event", "sink", "status", "purge-alerts")
	must.Eq(t, 0, code, must.Sprint(out))
	must.StrNotContains(t, out, secret)

	// The receiver comes back: every purge arrives, with Purge and the actor.
	rcv.up()
	rcv.waitPurges(all, 120*time.Second)
	purges, requests, badSigs, gaps := rcv.state()
	must.Eq(t, 0, badSigs, must.Sprintf("%d of %d deliveries had a bad signature", badSigs, requests))
	must.Positive(t, gaps, must.Sprint("the receiver was away longer than the buffer: a gap frame must say so"))
	for _, id := range all {
		p := purges[id]
		must.True(t, p.Purge, must.Sprint(id))
		must.NotNil(t, p.Actor, must.Sprintf("%s: purge without its actor", id))
		must.Eq(t, boot.AccessorID, p.Actor.AccessorID, must.Sprint(id))
	}

	// The cursor is committed and the last error cleared once deliveries succeed; the secret
	// is never read back.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var sink map[string]any
		_, err := c.Raw().Query("/v1/event/sink/purge-alerts", &sink, nil)
		must.NoError(t, err)
		must.MapNotContainsKey(t, sink, "Secret")
		if sink["LastError"] == "" && sink["LatestIndex"].(float64) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sink still reports an error: %v", sink)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
