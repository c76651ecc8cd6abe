package agent

import (
	"crypto/rsa"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hashicorp/nomad/api"
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

func matrixKeyringEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "keyring list", method: "GET", path: "/v1/operator/keyring/keys", allow: allowManagement},
		{name: "keyring rotate", method: "PUT", path: "/v1/operator/keyring/rotate", allow: allowManagement},
		{name: "keyring delete", method: "DELETE", path: "/v1/operator/keyring/key/no-such-key", allow: allowManagement, okStatus: 404},
	}
}

func TestACLMatrix_Keyring(t *testing.T) { runACLMatrix(t, matrixKeyringEndpoints(), matrixRows) }

// TestKeyring_ThroughOfficialClient rotates the root key, refuses to delete the active one,
// deletes the retired one, and never shows key material.
func TestKeyring_ThroughOfficialClient(t *testing.T) {
	ta := NewTestAgent(t, nil)
	kr := ta.Client("").Keyring()
	var keys []*api.RootKeyMeta
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		var err error
		keys, _, err = kr.List(nil)
		return err == nil && len(keys) == 1
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	old := keys[0]
	must.Eq(t, api.RootKeyStateActive, old.State)

	key, wm, err := kr.Rotate(nil, nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)
	must.Eq(t, api.RootKeyStateActive, key.State)
	must.NotEq(t, old.KeyID, key.KeyID)

	keys, _, err = kr.List(nil)
	must.NoError(t, err)
	must.Len(t, 2, keys)
	states := map[string]api.RootKeyState{}
	for _, k := range keys {
		states[k.KeyID] = k.State
	}
	must.Eq(t, map[string]api.RootKeyState{old.KeyID: api.RootKeyStateInactive, key.KeyID: api.RootKeyStateActive}, states)

	res := doHTTP(t, ta, "GET", "/v1/operator/keyring/keys", nil, nil)
	must.Eq(t, 200, res.status)
	must.StrNotContains(t, res.body, "PrivateKey")
	must.StrNotContains(t, res.body, "PublicKey")

	_, err = kr.Delete(&api.KeyringDeleteOptions{KeyID: key.KeyID}, nil)
	must.ErrorContains(t, err, "400")
	_, err = kr.Delete(&api.KeyringDeleteOptions{KeyID: "no-such-key"}, nil)
	must.ErrorContains(t, err, "404")
	_, _, err = kr.Rotate(&api.KeyringRotateOptions{PublishTime: 5}, nil)
	must.ErrorContains(t, err, "publish_time")

	_, err = kr.Delete(&api.KeyringDeleteOptions{KeyID: old.KeyID, Force: true}, nil)
	must.NoError(t, err)
	keys, _, err = kr.List(nil)
	must.NoError(t, err)
	must.Len(t, 1, keys)
	must.Eq(t, key.KeyID, keys[0].KeyID)
}
