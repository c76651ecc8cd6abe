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
