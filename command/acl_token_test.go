package command

import (
	"encoding/json"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const tokenCreated = `{"AccessorID":"5f3e9c22-e8c1-0e76-c37d-a016ae0ef372",` +
	`"SecretID":"09c76820-b4ae-56a2-ce2f-9392c4f8fddc","Name":"dev","Type":"client",` +
	`"Policies":["deployer","reader"],"Roles":null,"Global":false,"Hash":"GBIs",` +
	`"CreateTime":"2026-12-02T08:54:59.429713614Z","ExpirationTime":null,"CreateIndex":13,"ModifyIndex":13}`

func TestACLTokenCreate(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		response string
		wantBody api.ACLToken
		wantOut  string
	}{
		{
			name:     "client token",
			args:     []string{"-name", "dev", "-policy", "deployer", "-policy", "reader"},
			response: tokenCreated,
			wantBody: api.ACLToken{Name: "dev", Type: "client", Policies: []string{"deployer", "reader"}},
			wantOut: "Accessor ID  = 5f3e9c22-e8c1-0e76-c37d-a016ae0ef372\n" +
				"Secret ID    = 09c76820-b4ae-56a2-ce2f-9392c4f8fddc\n" +
				"Name         = dev\n" +
				"Type         = client\n" +
				"Global       = false\n" +
				"Create Time  = 2026-12-02 08:54:59.429713614 +0000 UTC\n" +
				"Expiry Time  = <none>\n" +
				"Create Index = 13\n" +
				"Modify Index = 13\n" +
				"Policies     = [deployer reader]\n" +
				"\nRoles\n<none>\n",
		},
		{
			name: "roles ttl and global",
			args: []string{"-name=ops", "-role-name", "operators", "-ttl", "1h", "-global"},
			response: `{"AccessorID":"a","SecretID":"s","Name":"ops","Type":"client","Policies":null,` +
				`"Roles":[{"ID":"r-1","Name":"operators"}],"Global":true,` +
				`"CreateTime":"2026-12-02T08:54:59Z","ExpirationTime":"2026-12-02T09:54:59Z",` +
				`"ExpirationTTL":"1h0m0s","CreateIndex":20,"ModifyIndex":20}`,
			wantBody: api.ACLToken{Name: "ops", Type: "client", Global: true,
				Roles: []*api.ACLTokenRoleLink{{Name: "operators"}}},
			wantOut: "Accessor ID  = a\n" +
				"Secret ID    = s\n" +
				"Name         = ops\n" +
				"Type         = client\n" +
				"Global       = true\n" +
				"Create Time  = 2026-12-02 08:54:59 +0000 UTC\n" +
				"Expiry Time  = 2026-12-02 09:54:59 +0000 UTC\n" +
				"Create Index = 20\n" +
				"Modify Index = 20\n" +
				"Policies     = []\n" +
				"\nRoles\nID   Name\nr-1  operators\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{"PUT /v1/acl/token": jsonBody(tc.response)})
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"acl", "token", "create"}, tc.args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)

			reqs := fa.find("PUT", "/v1/acl/token")
			must.Len(t, 1, reqs)
			var got api.ACLToken
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &got))
			must.Eq(t, tc.wantBody.Name, got.Name)
			must.Eq(t, tc.wantBody.Type, got.Type)
			must.Eq(t, tc.wantBody.Policies, got.Policies)
			must.Eq(t, tc.wantBody.Global, got.Global)
			must.Eq(t, tc.wantBody.Roles, got.Roles)
		})
	}
}

func TestACLTokenCreate_JSON(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{"PUT /v1/acl/token": jsonBody(tokenCreated)})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "acl", "token", "create", "-json", "-name", "dev", "-policy", "deployer")
	must.Eq(t, 0, code, must.Sprint(errOut))
	var tok api.ACLToken
	must.NoError(t, json.Unmarshal([]byte(out), &tok))
	must.Eq(t, "09c76820-b4ae-56a2-ce2f-9392c4f8fddc", tok.SecretID)
}

func TestACLTokenList(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{"GET /v1/acl/tokens": jsonBody(`[` +
		`{"AccessorID":"a-1","Name":"Bootstrap Token","Type":"management","Global":true,"CreateTime":"2026-12-02T08:54:59Z"},` +
		`{"AccessorID":"a-2","Name":"dev","Type":"client","Global":false,"CreateTime":"2026-12-02T08:54:59Z",` +
		`"ExpirationTime":"2000-01-01T00:00:00Z"}]`)})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "acl", "token", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Name             Type        Global  Accessor ID  Expired\n"+
		"Bootstrap Token  management  true    a-1          false\n"+
		"dev              client      false   a-2          true\n", out)
}

func TestACLPolicyApply(t *testing.T) {
	rules := writeFile(t, "deployer.hcl", `namespace "default" { policy = "write" }`)
	fa := newFakeAgent(t, map[string]route{"PUT /v1/acl/policy/deployer": jsonBody(``)})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "acl", "policy", "apply", "-description", "deploys", "deployer", rules)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Successfully wrote \"deployer\" ACL policy!\n", out)
	reqs := fa.find("PUT", "/v1/acl/policy/deployer")
	must.Len(t, 1, reqs)
	var got api.ACLPolicy
	must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &got))
	must.Eq(t, api.ACLPolicy{Name: "deployer", Description: "deploys", Rules: `namespace "default" { policy = "write" }`}, got)
}

func TestACLRoleUpdate_Merges(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/acl/role/r-1": jsonBody(`{"ID":"r-1","Name":"ops","Policies":[{"Name":"a"}]}`),
		"PUT /v1/acl/role/r-1": jsonBody(`{"ID":"r-1","Name":"ops","Policies":[{"Name":"a"},{"Name":"b"}],"CreateIndex":3,"ModifyIndex":4}`),
	})
	code, out, errOut := runCLI(t, fa.srv.URL, "", "acl", "role", "update", "-policy", "b", "-policy", "a", "r-1")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "ID           = r-1\nName         = ops\nDescription  = <none>\nPolicies     = a,b\n"+
		"Create Index = 3\nModify Index = 4\n", out)
	reqs := fa.find("PUT", "/v1/acl/role/r-1")
	must.Len(t, 1, reqs)
	var got api.ACLRole
	must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &got))
	must.Eq(t, "a,b", rolePolicyNames(got.Policies))
}

const (
	// tokenDev is the token most cases read or write.
	tokenDev     = `{"AccessorID":"a-1","SecretID":"s-1","Name":"dev","Type":"client","Policies":["p"],"Roles":[{"ID":"r-1","Name":"ops"}],"Global":false,"CreateTime":"2026-12-02T08:54:59Z","ExpirationTime":"2027-01-01T00:00:00Z","CreateIndex":7,"ModifyIndex":9}`
	tokenDevText = "Accessor ID  = a-1\n" +
		"Secret ID    = s-1\n" +
		"Name         = dev\n" +
		"Type         = client\n" +
		"Global       = false\n" +
		"Create Time  = 2026-12-02 08:54:59 +0000 UTC\n" +
		"Expiry Time  = 2027-01-01 00:00:00 +0000 UTC\n" +
		"Create Index = 7\n" +
		"Modify Index = 9\n" +
		"Policies     = [p]\n" +
		"\n" +
		"Roles\n" +
		"ID   Name\n" +
		"r-1  ops\n"
	tokenDevJSON = "{\n" +
		"    \"ExpirationTTL\": \"\",\n" +
		"    \"AccessorID\": \"a-1\",\n" +
		"    \"SecretID\": \"s-1\",\n" +
		"    \"Name\": \"dev\",\n" +
		"    \"Type\": \"client\",\n" +
		"    \"Policies\": [\n" +
		"        \"p\"\n" +
		"    ],\n" +
		"    \"Roles\": [\n" +
		"        {\n" +
		"            \"ID\": \"r-1\",\n" +
		"            \"Name\": \"ops\"\n" +
		"        }\n" +
		"    ],\n" +
		"    \"Global\": false,\n" +
		"    \"CreateTime\": \"2026-12-02T08:54:59Z\",\n" +
		"    \"ExpirationTime\": \"2027-01-01T00:00:00Z\",\n" +
		"    \"CreateIndex\": 7,\n" +
		"    \"ModifyIndex\": 9\n" +
		"}\n"
)

func TestACLTokenCommands(t *testing.T) {
	runCLICases(t, []cliCase{
		{
			name: "bootstrap",
			routes: map[string]route{
				"PUT /v1/acl/bootstrap": jsonBody(tokenDev),
			},
			args:   []string{"acl", "bootstrap"},
			stdout: tokenDevText,
		},
		{
			name: "bootstrap json",
			routes: map[string]route{
				"PUT /v1/acl/bootstrap": jsonBody(tokenDev),
			},
			args:   []string{"acl", "bootstrap", "-json"},
			stdout: tokenDevJSON,
		},
		{
			name:   "bootstrap two arguments",
			args:   []string{"acl", "bootstrap", "a", "b"},
			code:   1,
			stderr: "This command takes at most one argument: <path>\n",
		},
		{
			name:   "bootstrap missing secret file",
			args:   []string{"acl", "bootstrap", "/nonexistent/secret"},
			code:   1,
			stderr: "Error reading bootstrap secret: open /nonexistent/secret: no such file or directory\n",
		},
		{
			name: "bootstrap error",
			routes: map[string]route{
				"PUT /v1/acl/bootstrap": textError(400, "ACL bootstrap already done"),
			},
			args:   []string{"acl", "bootstrap"},
			code:   1,
			stderr: "Error bootstrapping: Unexpected response code: 400 (ACL bootstrap already done)\n",
		},
		{
			name:   "create invalid ttl",
			args:   []string{"acl", "token", "create", "-ttl", "soon", "-policy", "p"},
			code:   1,
			stderr: "Invalid -ttl \"soon\": time: invalid duration \"soon\"\n",
		},
		{
			name:   "create with argument",
			args:   []string{"acl", "token", "create", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name: "create error",
			routes: map[string]route{
				"PUT /v1/acl/token": textError(400, "missing policies"),
			},
			args:   []string{"acl", "token", "create"},
			code:   1,
			stderr: "Error creating token: Unexpected response code: 400 (missing policies)\n",
		},
		{
			name: "list empty",
			routes: map[string]route{
				"GET /v1/acl/tokens": jsonBody(`[]`),
			},
			args:   []string{"acl", "token", "list"},
			stdout: "No tokens found\n",
		},
		{
			name: "list json",
			routes: map[string]route{
				"GET /v1/acl/tokens": jsonBody(`[{"AccessorID":"a-1","Name":"dev","Type":"client","Global":false,"CreateTime":"2026-12-02T08:54:59Z"}]`),
			},
			args: []string{"acl", "token", "list", "-json"},
			stdout: "[\n" +
				"    {\n" +
				"        \"AccessorID\": \"a-1\",\n" +
				"        \"Name\": \"dev\",\n" +
				"        \"Type\": \"client\",\n" +
				"        \"Policies\": null,\n" +
				"        \"Roles\": null,\n" +
				"        \"Global\": false,\n" +
				"        \"CreateTime\": \"2026-12-02T08:54:59Z\",\n" +
				"        \"CreateIndex\": 0,\n" +
				"        \"ModifyIndex\": 0\n" +
				"    }\n" +
				"]\n",
		},
		{
			name: "list error",
			routes: map[string]route{
				"GET /v1/acl/tokens": textError(403, "Permission denied"),
			},
			args:   []string{"acl", "token", "list"},
			code:   1,
			stderr: "Error listing tokens: Unexpected response code: 403 (Permission denied)\n",
		},
		{
			name:   "list with argument",
			args:   []string{"acl", "token", "list", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name: "info",
			routes: map[string]route{
				"GET /v1/acl/token/a-1": jsonBody(tokenDev),
			},
			args:   []string{"acl", "token", "info", "a-1"},
			stdout: tokenDevText,
		},
		{
			name: "info json",
			routes: map[string]route{
				"GET /v1/acl/token/a-1": jsonBody(tokenDev),
			},
			args:   []string{"acl", "token", "info", "-json", "a-1"},
			stdout: tokenDevJSON,
		},
		{
			name:   "info not found",
			args:   []string{"acl", "token", "info", "a-9"},
			code:   1,
			stderr: "Error fetching token: Unexpected response code: 404 (not found)\n",
		},
		{
			name:   "info without argument",
			args:   []string{"acl", "token", "info"},
			code:   1,
			stderr: "This command takes one argument: <accessor-id>\n",
		},
		{
			name: "self",
			routes: map[string]route{
				"GET /v1/acl/token/self": jsonBody(tokenDev),
			},
			args:   []string{"acl", "token", "self"},
			stdout: tokenDevText,
		},
		{
			name: "self error",
			routes: map[string]route{
				"GET /v1/acl/token/self": textError(403, "ACL token not found"),
			},
			args:   []string{"acl", "token", "self"},
			code:   1,
			stderr: "Error fetching self token: Unexpected response code: 403 (ACL token not found)\n",
		},
		{
			name:   "self with argument",
			args:   []string{"acl", "token", "self", "x"},
			code:   1,
			stderr: "This command takes no arguments\n",
		},
		{
			name: "update",
			routes: map[string]route{
				"GET /v1/acl/token/a-1": jsonBody(tokenDev),
				"PUT /v1/acl/token/a-1": jsonBody(`{"AccessorID":"a-1","SecretID":"s-1","Name":"renamed","Type":"client","Policies":["p"],"Roles":[{"ID":"r-1","Name":"ops"}],"Global":false,"CreateTime":"2026-12-02T08:54:59Z","ExpirationTime":"2027-01-01T00:00:00Z","CreateIndex":7,"ModifyIndex":9}`),
			},
			args: []string{"acl", "token", "update", "-name", "renamed", "a-1"},
			stdout: "Accessor ID  = a-1\n" +
				"Secret ID    = s-1\n" +
				"Name         = renamed\n" +
				"Type         = client\n" +
				"Global       = false\n" +
				"Create Time  = 2026-12-02 08:54:59 +0000 UTC\n" +
				"Expiry Time  = 2027-01-01 00:00:00 +0000 UTC\n" +
				"Create Index = 7\n" +
				"Modify Index = 9\n" +
				"Policies     = [p]\n" +
				"\n" +
				"Roles\n" +
				"ID   Name\n" +
				"r-1  ops\n",
		},
		{
			name:   "update not found",
			args:   []string{"acl", "token", "update", "-name", "x", "a-9"},
			code:   1,
			stderr: "Error fetching token: Unexpected response code: 404 (not found)\n",
		},
		{
			name: "update error",
			routes: map[string]route{
				"GET /v1/acl/token/a-1": jsonBody(tokenDev),
				"PUT /v1/acl/token/a-1": textError(400, "invalid"),
			},
			args:   []string{"acl", "token", "update", "-type", "management", "a-1"},
			code:   1,
			stderr: "Error updating token: Unexpected response code: 400 (invalid)\n",
		},
		{
			name:   "update without argument",
			args:   []string{"acl", "token", "update"},
			code:   1,
			stderr: "This command takes one argument: <accessor-id>\n",
		},
		{
			name: "delete",
			routes: map[string]route{
				"DELETE /v1/acl/token/a-1": jsonBody(``),
			},
			args:   []string{"acl", "token", "delete", "a-1"},
			stdout: "Token a-1 successfully deleted\n",
		},
		{
			name: "delete error",
			routes: map[string]route{
				"DELETE /v1/acl/token/a-1": textError(403, "Permission denied"),
			},
			args:   []string{"acl", "token", "delete", "a-1"},
			code:   1,
			stderr: "Error deleting token: Unexpected response code: 403 (Permission denied)\n",
		},
		{
			name:   "delete without argument",
			args:   []string{"acl", "token", "delete"},
			code:   1,
			stderr: "This command takes one argument: <accessor-id>\n",
		},
	})
}
