package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestACLMatrix_ACLAuth(t *testing.T) { runACLMatrix(t, matrixACLAuthEndpoints(), matrixRows) }

// matrixACLAuthEndpoints are the auth method, binding rule and login routes. Listing auth
// method stubs asks for no token (a user about to log in has none); everything else about
// methods and rules takes management. Login takes no token but a login token: a bad one is
// refused to everyone.
func matrixACLAuthEndpoints() []matrixEndpoint {
	ensureMethod := func(t *testing.T, f *matrixFixture) { f.ensureAuthMethod(t, "matrix-jwt") }
	return []matrixEndpoint{
		{name: "acl auth-methods list", method: "GET", path: "/v1/acl/auth-methods", allow: allowEveryone},
		{
			name: "acl auth-method create", method: "PUT", path: "/v1/acl/auth-method",
			body:  `{"Name":"made-by-matrix","Type":"OIDC","TokenLocality":"local","MaxTokenTTL":"1h","Config":{"OIDCDiscoveryURL":"https://example.com","OIDCClientID":"c"}}`,
			setup: func(t *testing.T, f *matrixFixture) { f.deleteAuthMethodNamed(t, "made-by-matrix") }, allow: allowManagement,
		},
		{name: "acl auth-method read", method: "GET", path: "/v1/acl/auth-method/matrix-jwt", setup: ensureMethod, allow: allowManagement},
		{
			name: "acl auth-method update", method: "POST", path: "/v1/acl/auth-method/scratch-method",
			body:  `{"Name":"scratch-method","Type":"OIDC","TokenLocality":"global","MaxTokenTTL":"2h","Config":{"OIDCDiscoveryURL":"https://example.com","OIDCClientID":"c"}}`,
			setup: func(t *testing.T, f *matrixFixture) { f.ensureAuthMethod(t, "scratch-method") }, allow: allowManagement,
		},
		{
			name: "acl auth-method delete", method: "DELETE", path: "/v1/acl/auth-method/scratch-method",
			setup: func(t *testing.T, f *matrixFixture) { f.ensureAuthMethod(t, "scratch-method") }, allow: allowManagement,
		},
		{name: "acl binding-rules list", method: "GET", path: "/v1/acl/binding-rules", allow: allowManagement},
		{
			name: "acl binding-rule create", method: "PUT", path: "/v1/acl/binding-rule",
			body:  `{"AuthMethod":"matrix-jwt","BindType":"policy","BindName":"row-read","Selector":"\"admins\" in list.groups"}`,
			setup: ensureMethod, allow: allowManagement,
		},
		{
			name: "acl binding-rule read", method: "GET", path: "/v1/acl/binding-rule/{scratchRule}",
			setup: func(t *testing.T, f *matrixFixture) { f.ensureBindingRule(t) }, allow: allowManagement,
		},
		{
			name: "acl binding-rule update", method: "POST", path: "/v1/acl/binding-rule/{scratchRule}",
			body:  `{"ID":"{scratchRule}","AuthMethod":"matrix-jwt","BindType":"management"}`,
			setup: func(t *testing.T, f *matrixFixture) { f.ensureBindingRule(t) }, allow: allowManagement,
		},
		{
			name: "acl binding-rule delete", method: "DELETE", path: "/v1/acl/binding-rule/{scratchRule}",
			setup: func(t *testing.T, f *matrixFixture) { f.ensureBindingRule(t) }, allow: allowManagement,
		},
		{
			name: "acl login", method: "PUT", path: "/v1/acl/login",
			body:  `{"AuthMethodName":"matrix-jwt","LoginToken":"not-a-jwt"}`,
			setup: ensureMethod, allow: nil,
		},
	}
}

func (f *matrixFixture) ensureAuthMethod(t *testing.T, name string) {
	t.Helper()
	m, err := f.ta.Server().State().ACLAuthMethodByName(nil, name)
	must.NoError(t, err)
	if m != nil {
		return
	}
	_, _, err = f.mgmt.ACLAuthMethods().Create(testJWTMethod(t, name), nil)
	must.NoError(t, err)
}

func (f *matrixFixture) deleteAuthMethodNamed(t *testing.T, name string) {
	t.Helper()
	m, err := f.ta.Server().State().ACLAuthMethodByName(nil, name)
	must.NoError(t, err)
	if m != nil {
		_, err := f.mgmt.ACLAuthMethods().Delete(name, nil)
		must.NoError(t, err)
	}
}

func (f *matrixFixture) ensureBindingRule(t *testing.T) {
	t.Helper()
	f.ensureAuthMethod(t, "matrix-jwt")
	if f.scratchRule != "" {
		r, err := f.ta.Server().State().ACLBindingRuleByID(nil, f.scratchRule)
		must.NoError(t, err)
		if r != nil {
			return
		}
	}
	r, _, err := f.mgmt.ACLBindingRules().Create(&api.ACLBindingRule{
		AuthMethod: "matrix-jwt", BindType: "policy", BindName: "row-read", Selector: `"admins" in list.groups`,
	}, nil)
	must.NoError(t, err)
	f.scratchRule = r.ID
}
