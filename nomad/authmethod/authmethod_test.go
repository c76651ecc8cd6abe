package authmethod

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func newKey(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	must.NoError(t, err)
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func sign(t *testing.T, k *ecdsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, nil)
	must.NoError(t, err)
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	must.NoError(t, err)
	return raw
}

func TestVerifyJWT(t *testing.T) {
	key, pub := newKey(t)
	other, _ := newKey(t)
	now := time.Unix(1_800_000_000, 0)
	method := func(mut func(*structs.ACLAuthMethodConfig)) *structs.ACLAuthMethod {
		cfg := &structs.ACLAuthMethodConfig{
			JWTValidationPubKeys: []string{pub}, BoundAudiences: []string{"nomad"}, BoundIssuer: []string{"iss"},
			ExpirationLeeway: 10 * time.Second, NotBeforeLeeway: 10 * time.Second, ClockSkewLeeway: 5 * time.Second,
		}
		if mut != nil {
			mut(cfg)
		}
		return &structs.ACLAuthMethod{Name: "m", Type: structs.ACLAuthMethodTypeJWT, Config: cfg}
	}
	good := map[string]any{"iss": "iss", "aud": "nomad", "sub": "alice", "exp": now.Unix() + 60, "nbf": now.Unix() - 60, "iat": now.Unix() - 60}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range good {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	cases := []struct {
		name    string
		method  *structs.ACLAuthMethod
		token   string
		wantErr string
	}{
		{name: "valid", method: method(nil), token: sign(t, key, good)},
		{name: "other key", method: method(nil), token: sign(t, other, good), wantErr: "signature"},
		{name: "not a JWT", method: method(nil), token: "garbage", wantErr: "invalid login token"},
		{name: "expired beyond leeway", method: method(nil), token: sign(t, key, with("exp", now.Unix()-16)), wantErr: "expired"},
		{name: "expired within leeway", method: method(nil), token: sign(t, key, with("exp", now.Unix()-14))},
		{name: "not yet valid", method: method(nil), token: sign(t, key, with("nbf", now.Unix()+16)), wantErr: "not valid yet"},
		{name: "nbf within leeway", method: method(nil), token: sign(t, key, with("nbf", now.Unix()+14))},
		{name: "issued in the future", method: method(nil), token: sign(t, key, with("iat", now.Unix()+6)), wantErr: "future"},
		{name: "unbound audience", method: method(nil), token: sign(t, key, with("aud", "other")), wantErr: "audience"},
		{name: "audience list", method: method(nil), token: sign(t, key, with("aud", []string{"x", "nomad"}))},
		{name: "unbound issuer", method: method(nil), token: sign(t, key, with("iss", "evil")), wantErr: "issuer"},
		{name: "no bounds", method: method(func(c *structs.ACLAuthMethodConfig) { c.BoundAudiences, c.BoundIssuer = nil, nil }),
			token: sign(t, key, with("aud", "other"))},
		{name: "alg not allowed", method: method(func(c *structs.ACLAuthMethodConfig) { c.SigningAlgs = []string{"RS256"} }),
			token: sign(t, key, good), wantErr: "invalid login token"},
		{name: "no static keys", method: method(func(c *structs.ACLAuthMethodConfig) { c.JWTValidationPubKeys, c.JWKSURL = nil, "https://x" }),
			token: sign(t, key, good), wantErr: "JWKS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := VerifyJWT(tc.method, tc.token, now)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				must.True(t, errors.Is(err, ErrInvalidLoginToken))
				must.StrNotContains(t, err.Error(), tc.token)
				return
			}
			must.NoError(t, err)
			must.Eq(t, "alice", claims["sub"])
		})
	}
}

func TestMapClaimsAndBind(t *testing.T) {
	cfg := &structs.ACLAuthMethodConfig{
		ClaimMappings:     map[string]string{"sub": "user", "/org/team": "team", "admin": "admin", "missing": "gone", "nothing": "none"},
		ListClaimMappings: map[string]string{"groups": "groups", "role": "single"},
	}
	claims := map[string]any{
		"sub": "alice", "org": map[string]any{"team": "infra"}, "admin": true,
		"groups": []any{"eng", "ops"}, "role": "dev", "nothing": nil,
	}
	vars, err := MapClaims(cfg, claims)
	must.NoError(t, err)
	must.Eq(t, map[string]string{"user": "alice", "team": "infra", "admin": "true"}, vars.Value)
	must.Eq(t, map[string][]string{"groups": {"eng", "ops"}, "single": {"dev"}}, vars.List)

	cases := []struct {
		name  string
		rules []*structs.ACLBindingRule
		want  Result
	}{
		{name: "list selector matches", rules: []*structs.ACLBindingRule{{Selector: `"eng" in list.groups`, BindType: "role", BindName: "engineers"}},
			want: Result{Roles: []string{"engineers"}}},
		{name: "list selector misses", rules: []*structs.ACLBindingRule{{Selector: `"sales" in list.groups`, BindType: "role", BindName: "sales"}}},
		{name: "value selector and interpolation", rules: []*structs.ACLBindingRule{{Selector: `value.team == "infra"`, BindType: "policy", BindName: "team-${value.team}"}},
			want: Result{Policies: []string{"team-infra"}}},
		{name: "empty selector matches all", rules: []*structs.ACLBindingRule{{BindType: "policy", BindName: "base"}},
			want: Result{Policies: []string{"base"}}},
		{name: "unknown variable binds nothing", rules: []*structs.ACLBindingRule{{BindType: "policy", BindName: "${value.gone}"}}},
		{name: "list variable in bind name binds nothing", rules: []*structs.ACLBindingRule{{BindType: "policy", BindName: "${list.groups}"}}},
		{name: "management", rules: []*structs.ACLBindingRule{{Selector: `value.admin == "true"`, BindType: "management"}},
			want: Result{Management: true}},
		{name: "duplicates collapse", rules: []*structs.ACLBindingRule{{BindType: "policy", BindName: "p"}, {BindType: "policy", BindName: "p"}},
			want: Result{Policies: []string{"p"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Bind(tc.rules, vars)
			must.NoError(t, err)
			must.Eq(t, tc.want, *got)
		})
	}

	_, err = MapClaims(&structs.ACLAuthMethodConfig{ClaimMappings: map[string]string{"groups": "g"}}, claims)
	must.ErrorContains(t, err, "not a string")
	_, err = MapClaims(&structs.ACLAuthMethodConfig{ListClaimMappings: map[string]string{"org": "o"}}, claims)
	must.ErrorContains(t, err, "not a list")
}

// FuzzBind feeds arbitrary selectors, bind names and claim values through validation, claim
// mapping and binding: nothing may panic, and a selector that passes validation at write
// time must evaluate without error shape problems at login.
func FuzzBind(f *testing.F) {
	f.Add(`"eng" in list.groups`, "${value.user}", "alice", "eng")
	f.Add(`value.user == "x" and not ("a" in list.groups)`, "p-${value.user}-${value.team}", "", "")
	f.Add(`value matches "["`, "${", "\x00", "}")
	f.Fuzz(func(t *testing.T, selector, bindName, user, group string) {
		rule := &structs.ACLBindingRule{ID: "r", AuthMethod: "m", Selector: selector, BindType: "policy", BindName: bindName}
		if rule.Validate() != nil {
			return
		}
		cfg := &structs.ACLAuthMethodConfig{
			ClaimMappings: map[string]string{"sub": "user"}, ListClaimMappings: map[string]string{"groups": "groups"},
		}
		vars, err := MapClaims(cfg, map[string]any{"sub": user, "groups": []any{group}})
		if err != nil {
			t.Fatalf("string claims must map: %v", err)
		}
		res, err := Bind([]*structs.ACLBindingRule{rule}, vars)
		if err != nil {
			t.Fatalf("a validated selector must bind: %v", err)
		}
		if res.Management {
			t.Fatalf("a policy rule bound management")
		}
	})
}
