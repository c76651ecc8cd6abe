package command

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

// TestOperatorAPI sends requests through a fake agent: the path's query, -filter, the
// namespace and region flags and the token reach the agent; -H adds headers; a body on
// stdin makes the default method POST; an error status exits 1 with the agent's answer; and
// -dryrun prints a curl line that never holds the token's value.
func TestOperatorAPI(t *testing.T) {
	routes := map[string]route{
		"GET /v1/jobs": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Seen-Token", r.Header.Get("X-Nomad-Token"))
			w.Header().Set("X-Seen-Custom", r.Header.Get("X-Custom"))
			jsonBody(`[{"ID":"web"}]`)(w, r)
		},
		"POST /v1/var/app": jsonBody(`{"Path":"app"}`),
		"PUT /v1/var/app":  jsonBody(`{"Path":"app","put":true}`),
	}
	fa := newFakeAgent(t, routes)
	run := func(stdin string, args ...string) (int, string, string) {
		ui := cli.NewMockUi()
		var out bytes.Buffer
		cmd := &OperatorAPICommand{Meta: Meta{Ui: ui}, Stdout: &out}
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		code := cmd.Run(append([]string{"-address=" + fa.srv.URL, "-token=s3cret-token"}, args...))
		return code, out.String() + ui.OutputWriter.String(), ui.ErrorWriter.String()
	}

	code, out, errOut := run("", "-filter", `Status == "running"`, "-namespace", "team", "-H", "X-Custom: yes", "/v1/jobs?prefix=w")
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, `[{"ID":"web"}]`, out)
	reqs := fa.find("GET", "/v1/jobs")
	must.SliceLen(t, 1, reqs)
	must.Eq(t, map[string][]string{"prefix": {"w"}, "filter": {`Status == "running"`}, "namespace": {"team"}}, reqs[0].Query)

	code, _, errOut = run("", "-verbose", "-H", "X-Custom: yes", "v1/jobs")
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, errOut, "> GET "+fa.srv.URL+"/v1/jobs")
	must.StrContains(t, errOut, "< X-Seen-Token: s3cret-token")
	must.StrContains(t, errOut, "< X-Seen-Custom: yes")

	code, out, errOut = run(`{"Items":{"a":"b"}}`, "/v1/var/app")
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, `{"Path":"app"}`, out)
	posted := fa.find("POST", "/v1/var/app")
	must.SliceLen(t, 1, posted)
	must.Eq(t, `{"Items":{"a":"b"}}`, posted[0].Body)

	code, out, _ = run(`{}`, "-X", "put", "/v1/var/app")
	must.Zero(t, code)
	must.StrContains(t, out, `"put":true`)

	code, out, errOut = run("", "/v1/nope")
	must.Eq(t, 1, code)
	must.Eq(t, "", out)
	must.Eq(t, "Error: the agent answered 404 Not Found: not found\n", errOut)

	before := len(fa.requests())
	code, out, errOut = run(`{"a":"it's"}`, "-dryrun", "-H", "X-Custom: yes", "-region", "eu", "/v1/var/app")
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, "curl \\\n  -X POST \\\n  -H 'X-Custom: yes' \\\n  -H \"X-Nomad-Token: ${NOMAD_TOKEN}\" \\\n"+
		"  --data-binary '{\"a\":\"it'\\''s\"}' \\\n  '"+fa.srv.URL+"/v1/var/app?region=eu'\n", out)
	must.StrNotContains(t, out, "s3cret-token")
	must.Eq(t, before, len(fa.requests()))

	code, _, errOut = run("", "-H", "nocolon", "/v1/jobs")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `Invalid -H "nocolon"`)
}

// TestOperatorAPI_DryrunTLS prints the TLS settings as curl options, connecting to the
// address while checking the certificate's server name.
func TestOperatorAPI_DryrunTLS(t *testing.T) {
	ui := cli.NewMockUi()
	cmd := &OperatorAPICommand{Meta: Meta{Ui: ui}}
	code := cmd.Run([]string{"-address=https://10.0.0.5:4646", "-ca-cert=/etc/nomad/ca.pem",
		"-client-cert=/etc/nomad/cli.pem", "-client-key=/etc/nomad/cli-key.pem",
		"-tls-server-name=client.global.nomad", "-dryrun", "/v1/nodes"})
	must.Zero(t, code, must.Sprint(ui.ErrorWriter.String()))
	must.Eq(t, "curl \\\n  --cacert /etc/nomad/ca.pem \\\n  --cert /etc/nomad/cli.pem \\\n  --key /etc/nomad/cli-key.pem \\\n"+
		"  --connect-to client.global.nomad:4646:10.0.0.5:4646 \\\n  https://client.global.nomad:4646/v1/nodes\n", ui.OutputWriter.String())
}

const volumeNodeA = "5f0e6d2c-1111-4a3b-9c1d-000000000001"
const volumeNodeB = "9a8b7c6d-2222-4a3b-9c1d-000000000002"

func volumeRoutes() map[string]route {
	return map[string]route{
		"GET /v1/nodes": jsonBody(`[{"ID":"` + volumeNodeA + `","Name":"a","NodePool":"default"},{"ID":"` + volumeNodeB + `","Name":"b","NodePool":"gpu"}]`),
		"GET /v1/node/" + volumeNodeA: jsonBody(`{"ID":"` + volumeNodeA + `","Name":"a","NodePool":"default",
			"HostVolumes":{"data":{"Path":"/srv/data","ReadOnly":false},"certs":{"Path":"/etc/certs","ReadOnly":true}}}`),
		"GET /v1/node/" + volumeNodeB: jsonBody(`{"ID":"` + volumeNodeB + `","Name":"b","NodePool":"gpu",
			"HostVolumes":{"data":{"Path":"/mnt/data","ReadOnly":false}}}`),
	}
}

// TestVolumeStatus lists the host volumes the nodes report, by name and node; a name or a
// node pool narrows the list; -json prints the rows; CSI answers that it is not built.
func TestVolumeStatus(t *testing.T) {
	runCLICases(t, []cliCase{
		{
			name:   "all",
			routes: volumeRoutes(),
			args:   []string{"volume", "status"},
			stdout: "Host Volumes\n" +
				"Name   Node ID   Node Name  Node Pool  Path        Read Only\n" +
				"certs  5f0e6d2c  a          default    /etc/certs  true\n" +
				"data   5f0e6d2c  a          default    /srv/data   false\n" +
				"data   9a8b7c6d  b          gpu        /mnt/data   false\n",
		},
		{
			name:   "by name and pool",
			routes: volumeRoutes(),
			args:   []string{"volume", "status", "-node-pool", "gpu", "data"},
			stdout: "Host Volumes\n" +
				"Name  Node ID   Node Name  Node Pool  Path       Read Only\n" +
				"data  9a8b7c6d  b          gpu        /mnt/data  false\n",
		},
		{
			name:   "unknown name",
			routes: volumeRoutes(),
			args:   []string{"volume", "status", "nope"},
			code:   1,
			stderr: "No host volume named \"nope\" on any node\n",
		},
		{
			name:   "csi",
			args:   []string{"volume", "status", "-type", "csi"},
			code:   1,
			stderr: volumeUnavailable.sentence + "\n",
		},
	})
	fa := newFakeAgent(t, volumeRoutes())
	code, out, errOut := runCLI(t, fa.srv.URL, "", "volume", "status", "-json", "certs")
	must.Zero(t, code, must.Sprint(errOut))
	var rows []hostVolumeRow
	must.NoError(t, json.Unmarshal([]byte(out), &rows))
	must.Eq(t, []hostVolumeRow{{Name: "certs", NodeID: volumeNodeA, NodeName: "a", NodePool: "default", Path: "/etc/certs", ReadOnly: true}}, rows)
}
