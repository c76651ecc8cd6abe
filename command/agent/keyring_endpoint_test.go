package agent

import (
	"crypto/rsa"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// The official client's harness waits for /.well-known/jwks.json to list a key before it
// uses a server.
func TestKeyringEndpoint_JWKS(t *testing.T) {
	ta := NewTestAgent(t, nil)
	var res httpResult
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		res = doHTTP(t, ta, "GET", "/.well-known/jwks.json", nil, nil)
		return res.status == 200 && len(res.body) > len(`{"keys":[]}`)
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))

	var set jose.JSONWebKeySet
	must.NoError(t, json.Unmarshal([]byte(res.body), &set))
	must.Len(t, 1, set.Keys)
	key := set.Keys[0]
	must.Eq(t, "RS256", key.Algorithm)
	must.Eq(t, "sig", key.Use)
	must.NotEq(t, "", key.KeyID)
	_, ok := key.Key.(*rsa.PublicKey)
	must.True(t, ok, must.Sprintf("key is %T", key.Key))
	must.True(t, key.IsPublic())
	must.NotEq(t, "", res.header.Get("X-Nomad-Index"))
}

// A JWK of a private RSA key carries "d", "p" and "q"; none may ever appear.
func TestSecurity_JWKSHasNoPrivateKey(t *testing.T) {
	ta := NewTestAgent(t, nil)
	var keys struct {
		Keys []map[string]any `json:"keys"`
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		res := doHTTP(t, ta, "GET", "/.well-known/jwks.json", nil, nil)
		return json.Unmarshal([]byte(res.body), &keys) == nil && len(keys.Keys) > 0
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	for _, k := range keys.Keys {
		for _, field := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			_, found := k[field]
			must.False(t, found, must.Sprintf("private field %q in %v", field, k))
		}
	}
	// The agent's self report shows nothing of the key either.
	self := doHTTP(t, ta, "GET", "/v1/agent/self", nil, nil)
	must.StrNotContains(t, self.body, `"PrivateKey"`) // the test's own name is in the body
}
