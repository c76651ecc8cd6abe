package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// register sends the file's sink, HCL or JSON, with flags overriding it; the secret can come
// from the environment.
func TestEventSinkRegister(t *testing.T) {
	dir := t.TempDir()
	hclFile := filepath.Join(dir, "sink.hcl")
	must.NoError(t, os.WriteFile(hclFile, []byte(`
id      = "alerts"
type    = "webhook"
address = "https://alerts.example.com/nomad"
topics  = { Job = ["*"], PurgeRecord = ["*"] }
filter  = "Payload.Purge == true"
secret  = "0123456789abcdef"
`), 0o600))
	jsonFile := filepath.Join(dir, "sink.json")
	must.NoError(t, os.WriteFile(jsonFile, []byte(`{"ID":"alerts","Type":"webhook","Address":"http://a/","Topics":{"Job":["web"]}}`), 0o600))
	badFile := filepath.Join(dir, "bad.hcl")
	must.NoError(t, os.WriteFile(badFile, []byte(`adress = "x"`), 0o600))

	cases := []struct {
		name    string
		args    []string
		env     string
		want    map[string]any
		wantErr string
	}{
		{
			name: "hcl file",
			args: []string{hclFile},
			want: map[string]any{"ID": "alerts", "Type": "webhook", "Address": "https://alerts.example.com/nomad",
				"Topics": map[string]any{"Job": []any{"*"}, "PurgeRecord": []any{"*"}}, "Filter": "Payload.Purge == true",
				"Secret": "0123456789abcdef"},
		},
		{
			name: "json file, flags override, secret from the environment",
			args: []string{"-url", "http://b/", "-topic", "Job", "-topic", "Node:n1", jsonFile},
			env:  "from-env-0123456789",
			want: map[string]any{"ID": "alerts", "Type": "webhook", "Address": "http://b/",
				"Topics": map[string]any{"Job": []any{"*"}, "Node": []any{"n1"}}, "Filter": "", "Secret": "from-env-0123456789"},
		},
		{
			name:    "unknown attribute",
			args:    []string{badFile},
			wantErr: "Error parsing " + badFile,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NOMAD_EVENT_SINK_SECRET", tc.env)
			fa := newFakeAgent(t, map[string]route{"PUT /v1/event/sink/alerts": jsonBody(`{"Index":12}`)})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"event", "sink", "register"}, tc.args...)...)
			puts := fa.find("PUT", "/v1/event/sink/alerts")
			if tc.wantErr != "" {
				must.Eq(t, 1, code)
				must.StrContains(t, errOut, tc.wantErr)
				must.Len(t, 0, puts)
				return
			}
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, "Event sink \"alerts\" registered\n", out)
			must.Len(t, 1, puts)
			var got map[string]any
			must.NoError(t, json.Unmarshal([]byte(puts[0].Body), &got))
			must.Eq(t, tc.want, got)
		})
	}
}

const sinkStatusBody = `{"ID":"alerts","Type":"webhook","Address":"https://alerts.example.com/nomad",` +
	`"Topics":{"Job":["*"]},"Filter":"","LatestIndex":42,"LastError":"receiver answered 503 Service Unavailable",` +
	`"LastErrorTime":0,"LastDeliveryTime":0,"CreateIndex":10,"ModifyIndex":10}`

func TestEventSinkListStatusDeregister(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/event/sinks":          jsonBody("[" + sinkStatusBody + "]"),
		"GET /v1/event/sink/alerts":    jsonBody(sinkStatusBody),
		"DELETE /v1/event/sink/alerts": jsonBody(`{"Index":13}`),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "event", "sink", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "ID      Type     Address                           Latest Index  Last Error\n"+
		"alerts  webhook  https://alerts.example.com/nomad  42            receiver answered 503 Service Unavailable\n", out)

	code, out, errOut = runCLI(t, fa.srv.URL, "", "event", "sink", "status", "alerts")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Latest Index    = 42\n")
	must.StrContains(t, out, "Topics          = Job:*\n")
	must.StrContains(t, out, "Last Error      = receiver answered 503 Service Unavailable\n")

	code, out, errOut = runCLI(t, fa.srv.URL, "", "event", "sink", "deregister", "alerts")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Event sink \"alerts\" deregistered\n", out)
	must.Len(t, 1, fa.find("DELETE", "/v1/event/sink/alerts"))

	fa = newFakeAgent(t, map[string]route{"GET /v1/event/sinks": jsonBody("[]")})
	code, out, _ = runCLI(t, fa.srv.URL, "", "event", "sink", "list")
	must.Eq(t, 0, code)
	must.Eq(t, "No event sinks\n", out)
}

// The sink file README shows parses as written.
func TestREADME_EventSinkSpecParses(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "README.md"))
	must.NoError(t, err)
	_, rest, ok := strings.Cut(string(src), "cat > purge-alerts.hcl <<'HCL'\n")
	must.True(t, ok, must.Sprint("README no longer shows the sink file"))
	body, _, ok := strings.Cut(rest, "\nHCL\n")
	must.True(t, ok)
	spec, err := parseEventSinkSpec([]byte(body))
	must.NoError(t, err)
	must.Eq(t, "purge-alerts", spec.ID)
	must.Eq(t, map[string][]string{"Job": {"*"}}, spec.Topics)
	must.Eq(t, `Type == "JobDeregistered" and Payload.Purge == true`, spec.Filter)
}
