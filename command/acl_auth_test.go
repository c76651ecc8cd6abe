package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"
)

const authMethodCorp = `{"Name":"corp","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"1h0m0s","TokenNameFormat":"x",` +
	`"Default":false,"Config":{"JWTValidationPubKeys":["PEM"],"BoundAudiences":["nomad"],"ClaimMappings":{"sub":"user"}},"CreateIndex":5,"ModifyIndex":6}`

func decodeReq(t *testing.T, fa *fakeAgent, method, path string) map[string]any {
	t.Helper()
	reqs := fa.find(method, path)
	must.Len(t, 1, reqs)
	var body map[string]any
	must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
	return body
}

func TestACLAuthMethodCommands_SendWhatTheFlagsSay(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "jwt.json")
	must.NoError(t, os.WriteFile(cfgPath, []byte(`{"JWTValidationPubKeys":["PEM"],"BoundAudiences":["nomad"],"ClockSkewLeeway":"5s"}`), 0o600))

	t.Run("create", func(t *testing.T) {
		fa := newFakeAgent(t, map[string]route{"PUT /v1/acl/auth-method": jsonBody(authMethodCorp)})
		code, out, errOut := runCLI(t, fa.srv.URL, "", "acl", "auth-method", "create", "-name", "corp", "-type", "JWT",
			"-token-locality", "local", "-max-token-ttl", "1h", "-default", "-config", "@"+cfgPath)
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Claim mappings")
		must.StrContains(t, out, "{sub: user}")
		body := decodeReq(t, fa, "PUT", "/v1/acl/auth-method")
		must.Eq(t, "corp", body["Name"])
		must.Eq(t, "JWT", body["Type"])
		must.Eq(t, "1h0m0s", body["MaxTokenTTL"])
		must.Eq(t, true, body["Default"])
		cfg := body["Config"].(map[string]any)
		must.Eq[any](t, []any{"PEM"}, cfg["JWTValidationPubKeys"])
		must.Eq(t, "5s", cfg["ClockSkewLeeway"])
	})
	t.Run("update keeps what is not given", func(t *testing.T) {
		fa := newFakeAgent(t, map[string]route{
			"GET /v1/acl/auth-method/corp": jsonBody(authMethodCorp),
			"PUT /v1/acl/auth-method/corp": jsonBody(authMethodCorp),
		})
		code, _, errOut := runCLI(t, fa.srv.URL, "", "acl", "auth-method", "update", "-token-locality", "global", "corp")
		must.Eq(t, 0, code, must.Sprint(errOut))
		body := decodeReq(t, fa, "PUT", "/v1/acl/auth-method/corp")
		must.Eq(t, "global", body["TokenLocality"])
		must.Eq(t, "1h0m0s", body["MaxTokenTTL"])
		must.Eq(t, "JWT", body["Type"])
		must.Eq[any](t, []any{"PEM"}, body["Config"].(map[string]any)["JWTValidationPubKeys"])
	})
	t.Run("bad ttl", func(t *testing.T) {
		code, _, errOut := runCLI(t, "http://127.0.0.1:1", "", "acl", "auth-method", "create", "-name", "corp", "-max-token-ttl", "soon")
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "invalid -max-token-ttl")
	})

	runCLICases(t, []cliCase{
		{
			name:   "list",
			routes: map[string]route{"GET /v1/acl/auth-methods": jsonBody(`[{"Name":"corp","Type":"JWT","Default":true}]`)},
			args:   []string{"acl", "auth-method", "list"},
			stdout: "Name  Type  Default\ncorp  JWT   true\n",
		},
		{
			name:   "create without name",
			args:   []string{"acl", "auth-method", "create", "-type", "JWT"},
			code:   1,
			stderr: "ACL auth-method name must be specified using the -name flag\n",
		},
		{
			name:   "delete",
			routes: map[string]route{"DELETE /v1/acl/auth-method/corp": jsonBody(``)},
			args:   []string{"acl", "auth-method", "delete", "corp"},
			stdout: "ACL auth-method corp successfully deleted\n",
		},
	})
}

const ruleEng = `{"ID":"r-1","Description":"eng","AuthMethod":"corp","Selector":"\"eng\" in list.groups","BindType":"role","BindName":"engineers","CreateIndex":7,"ModifyIndex":8}`

func TestACLBindingRuleAndLoginCommands(t *testing.T) {
	t.Run("binding-rule create", func(t *testing.T) {
		fa := newFakeAgent(t, map[string]route{"PUT /v1/acl/binding-rule": jsonBody(ruleEng)})
		code, out, errOut := runCLI(t, fa.srv.URL, "", "acl", "binding-rule", "create", "-auth-method", "corp",
			"-selector", `"eng" in list.groups`, "-bind-type", "role", "-bind-name", "engineers", "-description", "eng")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Bind Name    = engineers")
		body := decodeReq(t, fa, "PUT", "/v1/acl/binding-rule")
		must.Eq(t, "corp", body["AuthMethod"])
		must.Eq(t, `"eng" in list.groups`, body["Selector"])
		must.Eq(t, "role", body["BindType"])
	})
	t.Run("binding-rule update keeps what is not given", func(t *testing.T) {
		fa := newFakeAgent(t, map[string]route{
			"GET /v1/acl/binding-rule/r-1": jsonBody(ruleEng),
			"PUT /v1/acl/binding-rule/r-1": jsonBody(ruleEng),
		})
		code, _, errOut := runCLI(t, fa.srv.URL, "", "acl", "binding-rule", "update", "-bind-name", "ops", "r-1")
		must.Eq(t, 0, code, must.Sprint(errOut))
		body := decodeReq(t, fa, "PUT", "/v1/acl/binding-rule/r-1")
		must.Eq(t, "ops", body["BindName"])
		must.Eq(t, "role", body["BindType"])
		must.Eq(t, `"eng" in list.groups`, body["Selector"])
	})
	t.Run("login", func(t *testing.T) {
		fa := newFakeAgent(t, map[string]route{"PUT /v1/acl/login": jsonBody(
			`{"AccessorID":"a-1","SecretID":"s-1","Name":"token created via login: corp","Type":"client","Policies":["p"]}`)})
		code, out, errOut := runCLI(t, fa.srv.URL, "", "login", "-method", "corp", "-login-token", "eyJ.x.y")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Successfully logged in via corp")
		must.StrContains(t, out, "s-1")
		body := decodeReq(t, fa, "PUT", "/v1/acl/login")
		must.Eq(t, "corp", body["AuthMethodName"])
		must.Eq(t, "eyJ.x.y", body["LoginToken"])
	})
	runCLICases(t, []cliCase{
		{
			name:   "binding-rule list",
			routes: map[string]route{"GET /v1/acl/binding-rules": jsonBody(`[{"ID":"r-1","Description":"eng","AuthMethod":"corp"}]`)},
			args:   []string{"acl", "binding-rule", "list"},
			stdout: "ID   Description  Auth Method\nr-1  eng          corp\n",
		},
		{
			name:   "binding-rule create without method",
			args:   []string{"acl", "binding-rule", "create", "-bind-type", "management"},
			code:   1,
			stderr: "ACL binding rule auth method must be specified using the -auth-method flag\n",
		},
		{
			name:   "login without method",
			args:   []string{"login", "-login-token", "x"},
			code:   1,
			stderr: "The auth method must be specified using the -method flag\n",
		},
		{
			name:   "login refused",
			routes: map[string]route{"PUT /v1/acl/login": textError(403, "Permission denied: no binding rule matches")},
			args:   []string{"login", "-method", "corp", "-login-token", "x"},
			code:   1,
			stderr: "Error logging in: Unexpected response code: 403 (Permission denied: no binding rule matches)\n",
		},
	})
}
