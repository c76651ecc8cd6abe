package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestNamespaceApply(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		existing route
		wantDesc string
	}{
		{name: "new", args: []string{"-description", "dev team", "dev"}, wantDesc: "dev team"},
		{
			name:     "existing keeps its description",
			args:     []string{"dev"},
			existing: jsonBody(`{"Name":"dev","Description":"kept","Meta":{"team":"a"}}`),
			wantDesc: "kept",
		},
		{
			name:     "existing description replaced",
			args:     []string{"-description=", "dev"},
			existing: jsonBody(`{"Name":"dev","Description":"old"}`),
			wantDesc: "",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			routes := map[string]route{"PUT /v1/namespace": jsonBody(`{}`)}
			if tc.existing != nil {
				routes["GET /v1/namespace/dev"] = tc.existing
			}
			fa := newFakeAgent(t, routes)
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"namespace", "apply"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, "Successfully applied namespace \"dev\"!\n", out)
			reqs := fa.find("PUT", "/v1/namespace")
			must.Len(t, 1, reqs)
			var ns api.Namespace
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &ns))
			must.Eq(t, "dev", ns.Name)
			must.Eq(t, tc.wantDesc, ns.Description)
		})
	}
}

func TestNamespaceList(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{"GET /v1/namespaces": jsonBody(
		`[{"Name":"prod","Description":""},{"Name":"default","Description":"Default shared namespace"}]`)})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "namespace", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Name     Description\ndefault  Default shared namespace\nprod\n", out)
}

func TestNamespaceCommands(t *testing.T) {
	runCLICases(t, []cliCase{
		{
			name:   "apply without argument",
			args:   []string{"namespace", "apply"},
			code:   1,
			stderr: "This command takes one argument: <name | file>\n",
		},
		{
			name: "apply lookup error",
			routes: map[string]route{
				"GET /v1/namespace/dev": textError(403, "Permission denied"),
			},
			args:   []string{"namespace", "apply", "dev"},
			code:   1,
			stderr: "Error looking up namespace: Unexpected response code: 403 (Permission denied)\n",
		},
		{
			name: "apply register error",
			routes: map[string]route{
				"PUT /v1/namespace": textError(400, "invalid name"),
			},
			args:   []string{"namespace", "apply", "dev"},
			code:   1,
			stderr: "Error applying namespace: Unexpected response code: 400 (invalid name)\n",
		},
		{
			name: "list empty",
			routes: map[string]route{
				"GET /v1/namespaces": jsonBody(`[]`),
			},
			args:   []string{"namespace", "list"},
			stdout: "No namespaces found\n",
		},
		{
			name: "list json",
			routes: map[string]route{
				"GET /v1/namespaces": jsonBody(`[{"Name":"prod","Description":""},{"Name":"default","Description":"Default shared namespace"}]`),
			},
			args: []string{"namespace", "list", "-json"},
			stdout: "[\n" +
				"    {\n" +
				"        \"Name\": \"prod\",\n" +
				"        \"Description\": \"\",\n" +
				"        \"Quota\": \"\",\n" +
				"        \"Capabilities\": null,\n" +
				"        \"NodePoolConfiguration\": null,\n" +
				"        \"VaultConfiguration\": null,\n" +
				"        \"ConsulConfiguration\": null,\n" +
				"        \"Meta\": null,\n" +
				"        \"CreateIndex\": 0,\n" +
				"        \"ModifyIndex\": 0,\n" +
				"        \"RequiredExtraClaims\": null,\n" +
				"        \"OptionalExtraClaims\": null\n" +
				"    },\n" +
				"    {\n" +
				"        \"Name\": \"default\",\n" +
				"        \"Description\": \"Default shared namespace\",\n" +
				"        \"Quota\": \"\",\n" +
				"        \"Capabilities\": null,\n" +
				"        \"NodePoolConfiguration\": null,\n" +
				"        \"VaultConfiguration\": null,\n" +
				"        \"ConsulConfiguration\": null,\n" +
				"        \"Meta\": null,\n" +
				"        \"CreateIndex\": 0,\n" +
				"        \"ModifyIndex\": 0,\n" +
				"        \"RequiredExtraClaims\": null,\n" +
				"        \"OptionalExtraClaims\": null\n" +
				"    }\n" +
				"]\n",
		},
		{
			name: "list error",
			routes: map[string]route{
				"GET /v1/namespaces": textError(500, "boom"),
			},
			args:   []string{"namespace", "list"},
			code:   1,
			stderr: "Error listing namespaces: Unexpected response code: 500 (boom)\n",
		},
		{
			name:   "list with argument",
			args:   []string{"namespace", "list", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name: "status",
			routes: map[string]route{
				"GET /v1/namespace/prod": jsonBody(`{"Name":"prod","Description":"production","Meta":{"team":"web","cost":"high"}}`),
			},
			args: []string{"namespace", "status", "prod"},
			stdout: "Name                   = prod\n" +
				"Description            = production\n" +
				"Quota                  = <none>\n" +
				"Metadata               = cost=high,team=web\n" +
				"Enabled Task Drivers   = <all>\n" +
				"Disabled Task Drivers  = <none>\n" +
				"Enabled Network Modes  = <all>\n" +
				"Disabled Network Modes = <none>\n",
		},
		{
			name: "status with capabilities",
			routes: map[string]route{
				"GET /v1/namespace/prod": jsonBody(`{"Name":"prod","Capabilities":{"EnabledTaskDrivers":["docker","exec"],` +
					`"DisabledTaskDrivers":["raw_exec"],"DisabledNetworkModes":["host"]}}`),
			},
			args: []string{"namespace", "status", "prod"},
			stdout: "Name                   = prod\n" +
				"Description            =\n" +
				"Quota                  = <none>\n" +
				"Enabled Task Drivers   = docker,exec\n" +
				"Disabled Task Drivers  = raw_exec\n" +
				"Enabled Network Modes  = <all>\n" +
				"Disabled Network Modes = host\n",
		},
		{
			name: "status without meta",
			routes: map[string]route{
				"GET /v1/namespace/prod": jsonBody(`{"Name":"prod","Description":"","Quota":"q1"}`),
			},
			args: []string{"namespace", "status", "prod"},
			stdout: "Name                   = prod\n" +
				"Description            =\n" +
				"Quota                  = q1\n" +
				"Enabled Task Drivers   = <all>\n" +
				"Disabled Task Drivers  = <none>\n" +
				"Enabled Network Modes  = <all>\n" +
				"Disabled Network Modes = <none>\n",
		},
		{
			name: "status json",
			routes: map[string]route{
				"GET /v1/namespace/prod": jsonBody(`{"Name":"prod","Description":"production"}`),
			},
			args: []string{"namespace", "status", "-json", "prod"},
			stdout: "{\n" +
				"    \"Name\": \"prod\",\n" +
				"    \"Description\": \"production\",\n" +
				"    \"Quota\": \"\",\n" +
				"    \"Capabilities\": null,\n" +
				"    \"NodePoolConfiguration\": null,\n" +
				"    \"VaultConfiguration\": null,\n" +
				"    \"ConsulConfiguration\": null,\n" +
				"    \"Meta\": null,\n" +
				"    \"CreateIndex\": 0,\n" +
				"    \"ModifyIndex\": 0,\n" +
				"    \"RequiredExtraClaims\": null,\n" +
				"    \"OptionalExtraClaims\": null\n" +
				"}\n",
		},
		{
			name:   "status not found",
			args:   []string{"namespace", "status", "nope"},
			code:   1,
			stderr: "Error looking up namespace: Unexpected response code: 404 (not found)\n",
		},
		{
			name:   "status without argument",
			args:   []string{"namespace", "status"},
			code:   1,
			stderr: "This command takes one argument: <name>\n",
		},
		{
			name: "delete",
			routes: map[string]route{
				"DELETE /v1/namespace/dev": jsonBody(``),
			},
			args:   []string{"namespace", "delete", "dev"},
			stdout: "Successfully deleted namespace \"dev\"!\n",
		},
		{
			name: "delete error",
			routes: map[string]route{
				"DELETE /v1/namespace/dev": textError(400, "namespace \"dev\" has non-terminal jobs"),
			},
			args:   []string{"namespace", "delete", "dev"},
			code:   1,
			stderr: "Error deleting namespace: Unexpected response code: 400 (namespace \"dev\" has non-terminal jobs)\n",
		},
		{
			name:   "delete without argument",
			args:   []string{"namespace", "delete"},
			code:   1,
			stderr: "This command takes one argument: <name>\n",
		},
	})
}

// Issue 32 item 2, in `make security`: a spec file is the whole namespace, capabilities
// included; nothing is read from the agent first, and a misspelt setting is an error rather
// than a namespace without the control.
func TestSecurity_NamespaceApplySpecFile(t *testing.T) {
	cases := []struct {
		name     string
		file     string
		src      string
		wantNS   api.Namespace
		wantErr  string
		wantCode int
	}{
		{
			name: "hcl",
			file: "ns.hcl",
			src: `name = "dev"
description = "Developers"
meta {
  team = "a"
}
capabilities {
  enabled_task_drivers   = ["docker", "exec"]
  disabled_task_drivers  = ["raw_exec"]
  enabled_network_modes  = ["bridge"]
  disabled_network_modes = ["host"]
}
`,
			wantNS: api.Namespace{Name: "dev", Description: "Developers", Meta: map[string]string{"team": "a"},
				Capabilities: &api.NamespaceCapabilities{
					EnabledTaskDrivers: []string{"docker", "exec"}, DisabledTaskDrivers: []string{"raw_exec"},
					EnabledNetworkModes: []string{"bridge"}, DisabledNetworkModes: []string{"host"},
				}},
		},
		{
			name:   "json",
			file:   "ns.json",
			src:    `{"Name":"dev","Capabilities":{"DisabledTaskDrivers":["raw_exec"]}}`,
			wantNS: api.Namespace{Name: "dev", Capabilities: &api.NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}}},
		},
		{
			name:     "misspelt capability",
			file:     "typo.hcl",
			src:      "name = \"dev\"\ncapabilities {\n  disabled_task_driver = [\"raw_exec\"]\n}\n",
			wantCode: 1,
			wantErr:  `Unsupported argument; An argument named "disabled_task_driver" is not expected here.`,
		},
		{
			name:     "misspelt json field",
			file:     "typo.json",
			src:      `{"Name":"dev","Capabilities":{"DisabledTaskDriver":["raw_exec"]}}`,
			wantCode: 1,
			wantErr:  `unknown field "DisabledTaskDriver"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			must.NoError(t, os.WriteFile(path, []byte(tc.src), 0o600))
			fa := newFakeAgent(t, map[string]route{"PUT /v1/namespace": jsonBody(`{}`)})
			code, out, errOut := runCLI(t, fa.srv.URL, "", "namespace", "apply", path)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			if tc.wantErr != "" {
				must.StrContains(t, errOut, tc.wantErr)
				must.Len(t, 0, fa.find("PUT", "/v1/namespace"))
				return
			}
			must.Eq(t, "Successfully applied namespace \"dev\"!\n", out)
			must.Len(t, 0, fa.find("GET", "/v1/namespace/dev"))
			reqs := fa.find("PUT", "/v1/namespace")
			must.Len(t, 1, reqs)
			var ns api.Namespace
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &ns))
			must.Eq(t, tc.wantNS, ns)
		})
	}
}

// Every namespace spec file README shows (a snippet whose first word is `name`, introduced by
// a `nomad namespace apply` comment) is one the CLI's `namespace apply FILE` reads.
func TestREADME_NamespaceSpecsParse(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "README.md"))
	must.NoError(t, err)
	found := 0
	for _, m := range regexp.MustCompile("(?s)```hcl\n(.*?)```").FindAllStringSubmatch(string(src), -1) {
		first := ""
		for _, line := range strings.Split(m[1], "\n") {
			if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
				first = f[0]
				break
			}
		}
		if first != "name" || !strings.Contains(m[1], "nomad namespace apply") {
			continue
		}
		found++
		ns, err := parseNamespaceSpec([]byte(m[1]))
		must.NoError(t, err, must.Sprint(m[1]))
		must.NotEq(t, "", ns.Name)
	}
	must.Positive(t, found)
}
