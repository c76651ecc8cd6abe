package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nomadfork/nomad/nomad/eventsink"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

const sinkTestSecret = "sink-secret-0123456789"

// TestEventSink_HTTP: the shapes of the sink routes, the 400s that name the field, the 403 of
// a token that is not management, a secret that no read returns, and a purge delivered to
// the receiver, signed, with Purge and Actor, after which the sink's LatestIndex has moved.
func TestEventSink_HTTP(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)

	var mu sync.Mutex
	var bodies [][]byte
	badSig := 0
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if !eventsink.Verify(sinkTestSecret, raw, r.Header.Get("X-Nomad-Signature")) {
			badSig++
		}
		bodies = append(bodies, raw)
	}))
	defer rcv.Close()

	do := func(token, method, path, body string) (int, string) {
		req, err := http.NewRequest(method, ta.URL()+path, strings.NewReader(body))
		must.NoError(t, err)
		if token != "" {
			req.Header.Set("X-Nomad-Token", token)
		}
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		must.NoError(t, err)
		return resp.StatusCode, string(raw)
	}
	sinkBody := func(edit func(m map[string]any)) string {
		m := map[string]any{"Type": "webhook", "Address": rcv.URL + "/hook",
			"Topics": map[string][]string{"Job": {"*"}}, "Filter": `Payload.Purge == true`, "Secret": sinkTestSecret}
		if edit != nil {
			edit(m)
		}
		return mustJSON(m)
	}

	bad := []struct {
		field string
		edit  func(m map[string]any)
		path  string
	}{
		{"Type", func(m map[string]any) { m["Type"] = "kafka" }, ""},
		{"Address", func(m map[string]any) { m["Address"] = "ftp://example.com/" }, ""},
		{"Address", func(m map[string]any) { m["Address"] = "" }, ""},
		{"Topics", func(m map[string]any) { delete(m, "Topics") }, ""},
		{"Topics", func(m map[string]any) { m["Topics"] = map[string][]string{"Job": {}} }, ""},
		{"Filter", func(m map[string]any) { m["Filter"] = "Payload.Purge ==" }, ""},
		{"Secret", func(m map[string]any) { delete(m, "Secret") }, ""},
		{"ID", nil, "/v1/event/sink/bad%20id"},
		{"ID", nil, "/v1/event/sink/" + strings.Repeat("x", 129)},
		{"ID", func(m map[string]any) { m["ID"] = "other" }, ""},
	}
	for _, tc := range bad {
		path := tc.path
		if path == "" {
			path = "/v1/event/sink/alerts"
		}
		code, body := do(root, "PUT", path, sinkBody(tc.edit))
		must.Eq(t, 400, code, must.Sprintf("%s: %s", tc.field, body))
		must.StrContains(t, body, tc.field)
		must.StrNotContains(t, body, sinkTestSecret)
	}

	// A token that is not management is refused everywhere.
	writeToken := clientToken(t, ta, root, "writer", `namespace "default" { policy = "write" }
operator { policy = "write" }`).SecretID
	for _, r := range [][2]string{{"PUT", "/v1/event/sink/alerts"}, {"GET", "/v1/event/sinks"}, {"GET", "/v1/event/sink/alerts"}, {"DELETE", "/v1/event/sink/alerts"}} {
		code, body := do(writeToken, r[0], r[1], sinkBody(nil))
		must.Eq(t, 403, code, must.Sprintf("%s %s: %s", r[0], r[1], body))
		must.True(t, strings.HasPrefix(body, "Permission denied"), must.Sprint(body))
	}

	code, body := do(root, "PUT", "/v1/event/sink/alerts", sinkBody(nil))
	must.Eq(t, 200, code, must.Sprint(body))
	var idx map[string]any
	must.NoError(t, json.Unmarshal([]byte(body), &idx))
	must.MapLen(t, 1, idx)
	must.Positive(t, idx["Index"].(float64))

	// A purge reaches the receiver with who did it.
	c := ta.Client(root)
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Deregister("web", true, nil)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(bodies) > 0
	}), wait.Timeout(20*time.Second), wait.Gap(50*time.Millisecond)))
	mu.Lock()
	must.Eq(t, 0, badSig)
	var batch struct {
		Index  uint64
		Events []struct {
			Type    string
			Payload struct {
				Purge bool
				Job   struct{ ID string }
				Actor struct{ Name, AccessorID string }
			}
		}
	}
	must.NoError(t, json.Unmarshal(bodies[0], &batch))
	mu.Unlock()
	must.Len(t, 1, batch.Events, must.Sprint("the filter keeps only the purge"))
	must.Eq(t, "JobDeregistered", batch.Events[0].Type)
	must.True(t, batch.Events[0].Payload.Purge)
	must.Eq(t, "web", batch.Events[0].Payload.Job.ID)
	must.NotEq(t, "", batch.Events[0].Payload.Actor.AccessorID)

	// The read shows the cursor and never the secret.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		_, body := do(root, "GET", "/v1/event/sink/alerts", "")
		var got map[string]any
		return json.Unmarshal([]byte(body), &got) == nil && uint64(got["LatestIndex"].(float64)) >= batch.Index
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	code, body = do(root, "GET", "/v1/event/sink/alerts", "")
	must.Eq(t, 200, code)
	must.StrNotContains(t, body, sinkTestSecret)
	must.StrNotContains(t, body, "Secret")
	for _, k := range []string{`"LatestIndex"`, `"LastError"`, `"Address"`, `"Topics"`} {
		must.StrContains(t, body, k)
	}
	code, body = do(root, "GET", "/v1/event/sinks", "")
	must.Eq(t, 200, code)
	must.StrContains(t, body, `"alerts"`)
	must.StrNotContains(t, body, sinkTestSecret)

	code, _ = do(root, "DELETE", "/v1/event/sink/alerts", "")
	must.Eq(t, 200, code)
	code, _ = do(root, "GET", "/v1/event/sink/alerts", "")
	must.Eq(t, 404, code)
	code, _ = do(root, "DELETE", "/v1/event/sink/alerts", "")
	must.Eq(t, 404, code)
}
