package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestJobProtection_HTTP: the fixed shapes of PUT and GET /v1/job/:id/protection, the 409 of a
// purge by a management token, and protection kept across a registration.
func TestJobProtection_HTTP(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	do := func(method, path, body string) (int, string) {
		req, err := http.NewRequest(method, ta.URL()+path, strings.NewReader(body))
		must.NoError(t, err)
		req.Header.Set("X-Nomad-Token", root)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		must.NoError(t, err)
		return resp.StatusCode, string(raw)
	}

	code, body := do("PUT", "/v1/job/web/protection", `{"Protected":true}`)
	must.Eq(t, 400, code)
	must.StrContains(t, body, "Reason")
	code, body = do("PUT", "/v1/job/nope/protection", `{"Protected":true,"Reason":"x"}`)
	must.Eq(t, 404, code, must.Sprint(body))

	code, body = do("PUT", "/v1/job/web/protection", `{"Protected":true,"Reason":"billing depends on it"}`)
	must.Eq(t, 200, code, must.Sprint(body))
	var idx map[string]any
	must.NoError(t, json.Unmarshal([]byte(body), &idx))
	must.MapLen(t, 1, idx)
	must.Positive(t, idx["Index"].(float64))

	// Registering a new version keeps the protection: it is not part of the spec.
	job := testJob("web")
	job.Meta = map[string]string{"rev": "2"}
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)

	code, body = do("GET", "/v1/job/web/protection", "")
	must.Eq(t, 200, code, must.Sprint(body))
	var got map[string]json.RawMessage
	must.NoError(t, json.Unmarshal([]byte(body), &got))
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	must.SliceContainsAll(t, []string{"Protected", "Reason", "Actor", "ModifyTime", "ModifyIndex"}, keys)
	must.Eq(t, "true", string(got["Protected"]))
	must.Eq(t, `"billing depends on it"`, string(got["Reason"]))
	var actor map[string]string
	must.NoError(t, json.Unmarshal(got["Actor"], &actor))
	must.Eq(t, "management", actor["Type"])
	must.NotEq(t, "", actor["AccessorID"])

	code, body = do("DELETE", "/v1/job/web?purge=true", "")
	must.Eq(t, 409, code)
	must.StrContains(t, body, "protected")
	must.StrContains(t, body, "billing depends on it")
	info, _, err := c.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.Eq(t, "web", *info.ID)

	// Stopping is still allowed, and a forced GC keeps the stopped job.
	_, _, err = c.Jobs().Deregister("web", false, nil)
	must.NoError(t, err)
	must.NoError(t, c.System().GarbageCollect())
	info, _, err = c.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.True(t, *info.Stop)

	code, body = do("PUT", "/v1/job/web/protection", `{"Protected":false}`)
	must.Eq(t, 200, code, must.Sprint(body))
	_, _, err = c.Jobs().DeregisterOpts("web", &api.DeregisterOptions{Purge: true}, nil)
	must.NoError(t, err)
}
