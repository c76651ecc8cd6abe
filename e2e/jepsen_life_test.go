//go:build e2e && e2ecluster

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nomadfork/nomad/internal/jepsen"
)

// The ACL-token and purge workloads: objects created once, read through random servers,
// removed at most once (internal/jepsen's lifecycle model).

// lifeObject is what one client knows of an object it created.
type lifeObject struct {
	key, ref string
	// acked: the create was acknowledged, so the object may be removed; removing: a remove
	// was sent (whatever its outcome, it is never sent twice).
	acked, removing bool
}

// answer turns a write's HTTP answer into an outcome, as cas does.
func answer(resp *http.Response, err error) (jepsen.Outcome, []byte, string) {
	if err != nil {
		return jepsen.Unknown, nil, err.Error()
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == 200:
		return jepsen.OK, text, ""
	case refusedUnchecked(resp.StatusCode, text):
		return jepsen.Refused, text, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return jepsen.Fail, text, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
	}
	return jepsen.Unknown, text, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(text)))
}

// exists is a default read of path (unless stale): found on 200, not found on a 404 saying
// so; anything else did not answer.
func (jc *jepsenCluster) exists(h *labHost, path string) (found, ok bool, errText string) {
	if jc.stale {
		path += "?stale"
	}
	resp, err := jc.http.Get(jc.url(h, path))
	if err != nil {
		return false, false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == 200:
		return true, true, ""
	case resp.StatusCode == 404 && strings.Contains(string(body), "not found"):
		return false, true, ""
	}
	return false, false, fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

func (jc *jepsenCluster) do(method string, h *labHost, path string, body any) (jepsen.Outcome, []byte, string) {
	var rd io.Reader
	if body != nil {
		buf, _ := json.Marshal(body)
		rd = strings.NewReader(string(buf))
	}
	req, err := http.NewRequest(method, jc.url(h, path), rd)
	if err != nil {
		return jepsen.Unknown, nil, err.Error()
	}
	return answer(jc.http.Do(req))
}

// tokenOps and purgeOps are the two workloads' verbs on the wire.
type lifeOps interface {
	create(jc *jepsenCluster, h *labHost, key string) (ref string, out jepsen.Outcome, errText string)
	remove(jc *jepsenCluster, h *labHost, o *lifeObject) (jepsen.Outcome, string)
	read(jc *jepsenCluster, h *labHost, o *lifeObject) (found, ok bool, errText string)
	// readRecord reads what the removal leaves; hasRecord is false when there is none.
	readRecord(jc *jepsenCluster, h *labHost, o *lifeObject) (found, ok bool, errText string)
	hasRecord() bool
	prefix() string
}

type tokenOps struct{}

// create makes a client token named key: the server picks its AccessorID, so a create whose
// outcome is unknown leaves no accessor to read it by (never reading it is always sound).
func (tokenOps) create(jc *jepsenCluster, h *labHost, key string) (string, jepsen.Outcome, string) {
	out, body, errText := jc.do(http.MethodPut, h, "/v1/acl/token", map[string]any{"Name": key, "Type": "client", "Policies": []string{"jepsen"}})
	if out != jepsen.OK {
		return "", out, errText
	}
	var tok struct{ AccessorID string }
	if err := json.Unmarshal(body, &tok); err != nil || tok.AccessorID == "" {
		return "", jepsen.Unknown, fmt.Sprintf("an answer without an AccessorID: %v", err)
	}
	return tok.AccessorID, jepsen.OK, ""
}

func (tokenOps) remove(jc *jepsenCluster, h *labHost, o *lifeObject) (jepsen.Outcome, string) {
	out, _, errText := jc.do(http.MethodDelete, h, "/v1/acl/token/"+o.ref, nil)
	return out, errText
}

func (tokenOps) read(jc *jepsenCluster, h *labHost, o *lifeObject) (bool, bool, string) {
	return jc.exists(h, "/v1/acl/token/"+o.ref)
}

func (tokenOps) readRecord(*jepsenCluster, *labHost, *lifeObject) (bool, bool, string) {
	return false, false, "tokens have no record"
}
func (tokenOps) hasRecord() bool { return false }
func (tokenOps) prefix() string  { return "tok" }

type purgeOps struct{}

func (purgeOps) create(jc *jepsenCluster, h *labHost, key string) (string, jepsen.Outcome, string) {
	out, _, errText := jc.do(http.MethodPut, h, "/v1/jobs", map[string]any{"Job": sleepJob(key, 0)})
	return key, out, errText
}

func (purgeOps) remove(jc *jepsenCluster, h *labHost, o *lifeObject) (jepsen.Outcome, string) {
	out, _, errText := jc.do(http.MethodDelete, h, "/v1/job/"+o.key+"?purge=true", nil)
	return out, errText
}

func (purgeOps) read(jc *jepsenCluster, h *labHost, o *lifeObject) (bool, bool, string) {
	return jc.exists(h, "/v1/job/"+o.key)
}

// readRecord lists the purge history by the job's ID (a prefix: purge-1-1 also lists
// purge-1-10, so the ID must match exactly).
func (purgeOps) readRecord(jc *jepsenCluster, h *labHost, o *lifeObject) (bool, bool, string) {
	path := "/v1/jobs/purged?prefix=" + url.QueryEscape(o.key)
	if jc.stale {
		path += "&stale"
	}
	var recs []struct{ JobID string }
	if err := jc.getJSON(h, path, &recs); err != nil {
		return false, false, err.Error()
	}
	for _, r := range recs {
		if r.JobID == o.key {
			return true, true, ""
		}
	}
	return false, true, ""
}
func (purgeOps) hasRecord() bool { return true }
func (purgeOps) prefix() string  { return "purge" }

// lifeWorker creates objects, reads its own objects (found or not) and their records through
// random servers, and removes some, each at most once.
func (jc *jepsenCluster) lifeWorker(ctx context.Context, ops lifeOps, add func(jepsen.LifeOp), now func() int64, id int, rng *rand.Rand) []*lifeObject {
	var objs []*lifeObject
	n := 0
	for ctx.Err() == nil {
		s := jc.servers[rng.Intn(len(jc.servers))]
		roll := rng.Intn(10)
		call := now()
		switch {
		case roll < 3 || len(objs) == 0:
			n++
			o := &lifeObject{key: fmt.Sprintf("%s-%d-%d", ops.prefix(), id, n)}
			ref, out, errText := ops.create(jc, s, o.key)
			o.ref, o.acked = ref, out == jepsen.OK
			add(jepsen.LifeOp{Client: id, Server: s.name, Key: o.key, Ref: ref, Kind: jepsen.Create, Outcome: out, Call: call, Return: now(), Err: errText})
			if out != jepsen.Fail && ref != "" {
				objs = append(objs, o)
			}
			if out != jepsen.OK {
				time.Sleep(50 * time.Millisecond)
			}
		case roll < 5:
			// Remove a random acknowledged object not removed yet, the newest more often: a
			// purge right after its registration races the register's replication.
			var cands []*lifeObject
			for _, o := range objs {
				if o.acked && !o.removing {
					cands = append(cands, o)
				}
			}
			if len(cands) == 0 {
				continue
			}
			o := cands[len(cands)-1]
			if rng.Intn(2) == 0 {
				o = cands[rng.Intn(len(cands))]
			}
			o.removing = true
			out, errText := ops.remove(jc, s, o)
			add(jepsen.LifeOp{Client: id, Server: s.name, Key: o.key, Ref: o.ref, Kind: jepsen.Remove, Outcome: out, Call: call, Return: now(), Err: errText})
		default:
			o := objs[rng.Intn(len(objs))]
			kind := jepsen.ReadObject
			found, ok, errText := false, false, ""
			if ops.hasRecord() && roll >= 8 {
				kind = jepsen.ReadRecord
				found, ok, errText = ops.readRecord(jc, s, o)
			} else {
				found, ok, errText = ops.read(jc, s, o)
			}
			op := jepsen.LifeOp{Client: id, Server: s.name, Key: o.key, Ref: o.ref, Kind: kind, Found: found, Outcome: jepsen.OK, Call: call, Return: now(), Err: errText}
			if !ok {
				op.Outcome = jepsen.Unknown
			}
			add(op)
			if !ok {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	return objs
}

// finalLife reads every object (and its record) through every server once the faults are
// over; each must answer within the deadline, and the reads join the history.
func (jc *jepsenCluster) finalLife(ops lifeOps, objs []*lifeObject, add func(jepsen.LifeOp), now func() int64, deadline time.Time) error {
	for i, s := range jc.servers {
		for _, o := range objs {
			kinds := []jepsen.LifeKind{jepsen.ReadObject}
			if ops.hasRecord() {
				kinds = append(kinds, jepsen.ReadRecord)
			}
			for _, kind := range kinds {
				for {
					call := now()
					var found, ok bool
					var errText string
					if kind == jepsen.ReadRecord {
						found, ok, errText = ops.readRecord(jc, s, o)
					} else {
						found, ok, errText = ops.read(jc, s, o)
					}
					if ok {
						add(jepsen.LifeOp{Client: 1000 + i, Server: s.name, Key: o.key, Ref: o.ref, Kind: kind, Found: found, Outcome: jepsen.OK, Call: call, Return: now()})
						break
					}
					if time.Now().After(deadline) {
						return fmt.Errorf("after healing, %s did not answer a %s of %s: %s", s.name, kind, o.key, errText)
					}
					time.Sleep(250 * time.Millisecond)
				}
			}
		}
	}
	return nil
}
