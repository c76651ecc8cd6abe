package agent

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// authRaw sends body to path with the management token and returns status and body.
func authRaw(t *testing.T, ta *TestAgent, token, method, path, body string) (int, string) {
	t.Helper()
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

func TestACLAuthMethod_SecretsNeverRead(t *testing.T) {
	ta, root, logs := newLoggedACLAgent(t, nil)
	c := ta.Client(root)
	const secret = "oidc-client-secret-1f2e3d"
	method := &api.ACLAuthMethod{
		Name: "corp", Type: api.ACLAuthMethodTypeOIDC, TokenLocality: api.ACLAuthMethodTokenLocalityGlobal, MaxTokenTTL: time.Hour,
		Config: &api.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://example.com", OIDCClientID: "id", OIDCClientSecret: secret},
	}
	created, _, err := c.ACLAuthMethods().Create(method, nil)
	must.NoError(t, err)
	must.Eq(t, "redacted", created.Config.OIDCClientSecret)
	must.Eq(t, "${auth_method_type}-${auth_method_name}", created.TokenNameFormat)
	must.Eq(t, time.Hour, created.MaxTokenTTL)

	got, _, err := c.ACLAuthMethods().Get("corp", nil)
	must.NoError(t, err)
	must.Eq(t, "redacted", got.Config.OIDCClientSecret)

	// A read-modify-write sends "redacted" back: the stored secret stays.
	got.TokenLocality = api.ACLAuthMethodTokenLocalityLocal
	_, _, err = c.ACLAuthMethods().Update(got, nil)
	must.NoError(t, err)
	stored, err := ta.Server().State().ACLAuthMethodByName(nil, "corp")
	must.NoError(t, err)
	must.Eq(t, secret, stored.Config.OIDCClientSecret)
	must.Eq(t, "local", stored.TokenLocality)

	for _, path := range []string{"/v1/acl/auth-method/corp", "/v1/acl/auth-methods"} {
		code, body := authRaw(t, ta, root, "GET", path, "")
		must.Eq(t, 200, code)
		must.StrNotContains(t, body, secret)
	}
	list, _, err := ta.Client("").ACLAuthMethods().List(nil)
	must.NoError(t, err, must.Sprint("listing stubs takes no token"))
	must.Len(t, 1, list)
	must.StrNotContains(t, logs.String(), secret)
}

func TestACLAuthMethod_BadInput(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	_, _, err := c.ACLAuthMethods().Create(&api.ACLAuthMethod{
		Name: "default-oidc", Type: "OIDC", TokenLocality: "local", MaxTokenTTL: time.Hour, Default: true,
		Config: &api.ACLAuthMethodConfig{OIDCDiscoveryURL: "https://example.com", OIDCClientID: "id"},
	}, nil)
	must.NoError(t, err)

	const okConfig = `{"OIDCDiscoveryURL":"https://example.com","OIDCClientID":"id"}`
	cases := []struct {
		name, path, body, wantField string
	}{
		{name: "bad name", body: `{"Name":"no spaces","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h","Config":` + okConfig + `}`, wantField: "Name"},
		{name: "long name", body: `{"Name":"` + strings.Repeat("a", 129) + `","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h","Config":` + okConfig + `}`, wantField: "Name"},
		{name: "bad type", body: `{"Name":"m","Type":"LDAP","TokenLocality":"local","MaxTokenTTL":"1h","Config":` + okConfig + `}`, wantField: "Type"},
		{name: "bad locality", body: `{"Name":"m","Type":"OIDC","TokenLocality":"mars","MaxTokenTTL":"1h","Config":` + okConfig + `}`, wantField: "TokenLocality"},
		{name: "zero ttl", body: `{"Name":"m","Type":"OIDC","TokenLocality":"local","Config":` + okConfig + `}`, wantField: "MaxTokenTTL"},
		{name: "unparsable ttl", body: `{"Name":"m","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"soon","Config":` + okConfig + `}`, wantField: "MaxTokenTTL"},
		{name: "ttl below the token minimum", body: `{"Name":"m","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1s","Config":` + okConfig + `}`, wantField: "MaxTokenTTL"},
		{name: "no config", body: `{"Name":"m","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h"}`, wantField: "Config"},
		{name: "oidc without client id", body: `{"Name":"m","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h","Config":{"OIDCDiscoveryURL":"https://x"}}`, wantField: "OIDCClientID"},
		{name: "jwt without keys", body: `{"Name":"m","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"1h","Config":{}}`, wantField: "JWTValidationPubKeys"},
		{name: "jwt with two key sources", body: `{"Name":"m","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"1h","Config":{"JWKSURL":"https://x","OIDCDiscoveryURL":"https://y"}}`, wantField: "JWKSURL"},
		{name: "jwt with a bad key", body: `{"Name":"m","Type":"JWT","TokenLocality":"local","MaxTokenTTL":"1h","Config":{"JWTValidationPubKeys":["nope"]}}`, wantField: "JWTValidationPubKeys[0]"},
		{name: "second default", body: `{"Name":"m","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h","Default":true,"Config":` + okConfig + `}`, wantField: "Default"},
		{name: "path and name differ", path: "/v1/acl/auth-method/other", body: `{"Name":"m","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h","Config":` + okConfig + `}`, wantField: "Name"},
		{name: "bad leeway", body: `{"Name":"m","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h","Config":{"OIDCDiscoveryURL":"https://x","OIDCClientID":"i","ClockSkewLeeway":"x"}}`, wantField: "ClockSkewLeeway"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/v1/acl/auth-method"
			}
			before := tableIndexes(t, ta.Server().State())
			code, body := authRaw(t, ta, root, "PUT", path, tc.body)
			must.Eq(t, 400, code, must.Sprint(body))
			must.StrContains(t, body, tc.wantField)
			must.Eq(t, before, tableIndexes(t, ta.Server().State()))
		})
	}

	code, body := authRaw(t, ta, root, "GET", "/v1/acl/auth-method/missing", "")
	must.Eq(t, 404, code, must.Sprint(body))
	code, body = authRaw(t, ta, root, "DELETE", "/v1/acl/auth-method/missing", "")
	must.Eq(t, 404, code, must.Sprint(body))
	code, _ = authRaw(t, ta, root, "PATCH", "/v1/acl/auth-method/default-oidc", "")
	must.Eq(t, 405, code)
}

func TestACLBindingRule_BadInputAndCascade(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	_, _, err := c.ACLAuthMethods().Create(testJWTMethod(t, "jwt"), nil)
	must.NoError(t, err)

	cases := []struct {
		name, path, body, wantField string
		wantCode                    int
	}{
		{name: "bad selector", body: `{"AuthMethod":"jwt","BindType":"policy","BindName":"p","Selector":"value.x ==="}`, wantField: "Selector"},
		{name: "unknown auth method", body: `{"AuthMethod":"nope","BindType":"policy","BindName":"p"}`, wantField: "AuthMethod"},
		{name: "no auth method", body: `{"BindType":"policy","BindName":"p"}`, wantField: "AuthMethod"},
		{name: "bad bind type", body: `{"AuthMethod":"jwt","BindType":"group","BindName":"p"}`, wantField: "BindType"},
		{name: "role without name", body: `{"AuthMethod":"jwt","BindType":"role"}`, wantField: "BindName"},
		{name: "management with name", body: `{"AuthMethod":"jwt","BindType":"management","BindName":"x"}`, wantField: "BindName"},
		{name: "ID on create", body: `{"ID":"5d1b3a7e-0000-4000-8000-000000000000","AuthMethod":"jwt","BindType":"management"}`, wantField: "ID"},
		{name: "unknown rule", path: "/v1/acl/binding-rule/5d1b3a7e-0000-4000-8000-000000000000",
			body: `{"AuthMethod":"jwt","BindType":"management"}`, wantField: "not found", wantCode: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path, want := tc.path, tc.wantCode
			if path == "" {
				path = "/v1/acl/binding-rule"
			}
			if want == 0 {
				want = 400
			}
			before := tableIndexes(t, ta.Server().State())
			code, body := authRaw(t, ta, root, "PUT", path, tc.body)
			must.Eq(t, want, code, must.Sprint(body))
			must.StrContains(t, body, tc.wantField)
			must.Eq(t, before, tableIndexes(t, ta.Server().State()))
		})
	}

	for range 2 {
		_, _, err := c.ACLBindingRules().Create(&api.ACLBindingRule{AuthMethod: "jwt", BindType: "management"}, nil)
		must.NoError(t, err)
	}
	rules, _, err := c.ACLBindingRules().List(nil)
	must.NoError(t, err)
	must.Len(t, 2, rules)
	_, err = c.ACLAuthMethods().Delete("jwt", nil)
	must.NoError(t, err)
	rules, _, err = c.ACLBindingRules().List(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, rules)
}

func TestACLLogin_JWT(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	_, err := c.ACLPolicies().Upsert(&api.ACLPolicy{Name: "readers", Rules: `namespace "default" { policy = "read" }`}, nil)
	must.NoError(t, err)
	_, err = c.ACLPolicies().Upsert(&api.ACLPolicy{Name: "team-infra", Rules: `namespace "default" { policy = "write" }`}, nil)
	must.NoError(t, err)
	role, _, err := c.ACLRoles().Create(&api.ACLRole{Name: "engineers", Policies: []*api.ACLRolePolicyLink{{Name: "readers"}}}, nil)
	must.NoError(t, err)
	_, _, err = c.ACLAuthMethods().Create(testJWTMethod(t, "jwt"), nil)
	must.NoError(t, err)
	for _, r := range []*api.ACLBindingRule{
		{AuthMethod: "jwt", Selector: `"eng" in list.groups`, BindType: "role", BindName: "engineers"},
		{AuthMethod: "jwt", Selector: `value.user == "bob"`, BindType: "policy", BindName: "team-${value.user}"},
		{AuthMethod: "jwt", Selector: `value.user == "carol"`, BindType: "policy", BindName: "team-infra"},
		{AuthMethod: "jwt", Selector: `"admins" in list.groups`, BindType: "management"},
	} {
		_, _, err := c.ACLBindingRules().Create(r, nil)
		must.NoError(t, err)
	}
	now := time.Now()
	claims := func(sub string, groups ...string) map[string]any {
		return map[string]any{"iss": "https://issuer.test", "aud": "nomad", "sub": sub, "groups": groups,
			"iat": now.Unix() - 10, "nbf": now.Unix() - 10, "exp": now.Add(5 * time.Minute).Unix()}
	}
	anon := ta.Client("")

	t.Run("role", func(t *testing.T) {
		tok, _, err := anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: "jwt", LoginToken: signTestJWT(t, claims("alice", "eng"))}, nil)
		must.NoError(t, err)
		must.Eq(t, "client", tok.Type)
		must.Eq(t, "token created via login: jwt", tok.Name)
		must.Len(t, 1, tok.Roles)
		must.Eq(t, role.ID, tok.Roles[0].ID)
		must.Eq(t, time.Hour, tok.ExpirationTTL)
		must.NotNil(t, tok.ExpirationTime)
		must.False(t, tok.Global)
		self, _, err := ta.Client(tok.SecretID).ACLTokens().Self(nil)
		must.NoError(t, err)
		must.Eq(t, tok.AccessorID, self.AccessorID)
		_, _, err = ta.Client(tok.SecretID).Jobs().List(nil)
		must.NoError(t, err, must.Sprint("the bound role grants read"))
	})
	t.Run("interpolated policy", func(t *testing.T) {
		tok, _, err := anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: "jwt", LoginToken: signTestJWT(t, claims("bob"))}, nil)
		must.NoError(t, err)
		must.Eq(t, []string{"team-bob"}, tok.Policies)
	})
	t.Run("management", func(t *testing.T) {
		tok, _, err := anon.ACLAuth().Login(&api.ACLLoginRequest{AuthMethodName: "jwt", LoginToken: signTestJWT(t, claims("dan", "admins"))}, nil)
		must.NoError(t, err)
		must.Eq(t, "management", tok.Type)
		must.SliceEmpty(t, tok.Policies)
	})

	refusals := []struct {
		name     string
		body     string
		wantCode int
		want     string
	}{
		{name: "no rule matches", body: `{"AuthMethodName":"jwt","LoginToken":"` + signTestJWT(t, claims("erin", "sales")) + `"}`, wantCode: 403, want: "Permission denied"},
		{name: "expired token", body: `{"AuthMethodName":"jwt","LoginToken":"` + signTestJWT(t, map[string]any{
			"iss": "https://issuer.test", "aud": "nomad", "sub": "alice", "groups": []string{"eng"}, "exp": now.Add(-time.Hour).Unix(),
		}) + `"}`, wantCode: 403, want: "expired"},
		{name: "wrong audience", body: `{"AuthMethodName":"jwt","LoginToken":"` + signTestJWT(t, map[string]any{
			"iss": "https://issuer.test", "aud": "other", "sub": "alice", "groups": []string{"eng"},
		}) + `"}`, wantCode: 403, want: "audience"},
		{name: "garbage token", body: `{"AuthMethodName":"jwt","LoginToken":"abc.def.ghi"}`, wantCode: 403, want: "Permission denied"},
		{name: "unknown method", body: `{"AuthMethodName":"nope","LoginToken":"abc"}`, wantCode: 404, want: "not found"},
		{name: "no method", body: `{"LoginToken":"abc"}`, wantCode: 400, want: "AuthMethodName"},
		{name: "no token", body: `{"AuthMethodName":"jwt"}`, wantCode: 400, want: "LoginToken"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			before := tableIndexes(t, ta.Server().State())
			code, body := authRaw(t, ta, "", "PUT", "/v1/acl/login", tc.body)
			must.Eq(t, tc.wantCode, code, must.Sprint(body))
			must.StrContains(t, body, tc.want)
			must.StrNotContains(t, body, "eyJ")
			must.Eq(t, before, tableIndexes(t, ta.Server().State()))
		})
	}
}
