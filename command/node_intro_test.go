package command

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestNodeIntroCreateCommand(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"
	ok := map[string]route{"PUT /v1/acl/identity/client-introduction-token": jsonBody(`{"JWT":"` + jwt + `"}`)}
	runCLICases(t, []cliCase{
		{name: "defaults", routes: ok, args: []string{"node", "intro", "create"},
			stdout: "Successfully generated client introduction token:\n\n" + jwt + "\n"},
		{name: "json", routes: ok, args: []string{"node", "intro", "create", "-json"},
			stdout: "{\n    \"JWT\": \"" + jwt + "\"\n}\n"},
		{name: "template", routes: ok, args: []string{"node", "intro", "create", "-t", "{{.JWT}}"}, stdout: jwt + "\n"},
		{name: "bad ttl", routes: ok, args: []string{"node", "intro", "create", "-ttl", "soon"}, code: 1,
			stderr: "Invalid -ttl \"soon\": must be a positive duration such as 15m\n"},
		{name: "no arguments", routes: ok, args: []string{"node", "intro", "create", "x"}, code: 1,
			stderr: "This command takes no arguments\n"},
		{name: "refused", args: []string{"node", "intro", "create"}, code: 1,
			routes: map[string]route{"PUT /v1/acl/identity/client-introduction-token": textError(403, "Permission denied")},
			stderr: "Error creating client introduction token: Unexpected response code: 403 (Permission denied)\n"},
	})

	// The flags reach the request as upstream's API names them.
	fa := newFakeAgent(t, ok)
	code, _, errOut := runCLI(t, fa.srv.URL, "", "node", "intro", "create", "-node-name=edge-1", "-node-pool=edge", "-ttl=15m")
	must.Eq(t, 0, code, must.Sprint(errOut))
	reqs := fa.find("PUT", "/v1/acl/identity/client-introduction-token")
	must.SliceLen(t, 1, reqs)
	var body api.ACLIdentityClientIntroductionTokenRequest
	must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
	must.Eq(t, api.ACLIdentityClientIntroductionTokenRequest{NodeName: "edge-1", NodePool: "edge", TTL: 15 * time.Minute}, body)
}
