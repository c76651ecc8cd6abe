package command

import (
	"encoding/json"
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
