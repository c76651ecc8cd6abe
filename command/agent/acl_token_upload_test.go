package agent

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestACLToken_UpstreamWriteRules: what the official client's own suite relies on for token
// writes. A policy may be named before it exists; a token may be uploaded with the IDs it had
// elsewhere (never a management token, never a secret in use); an update cannot change the
// TTL; a bad bootstrap secret is "invalid acl token".
func TestACLToken_UpstreamWriteRules(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	tokens := c.ACLTokens()

	created, _, err := tokens.Create(&api.ACLToken{Name: "early", Type: "client", Policies: []string{"not-yet"}}, nil)
	must.NoError(t, err)
	must.Eq(t, []string{"not-yet"}, created.Policies)
	// It grants nothing until the policy exists.
	_, _, err = ta.Client(created.SecretID).Jobs().List(nil)
	must.ErrorContains(t, err, "403")
	_, err = c.ACLPolicies().Upsert(&api.ACLPolicy{Name: "not-yet", Rules: `namespace "default" { policy = "read" }`}, nil)
	must.NoError(t, err)
	_, _, err = ta.Client(created.SecretID).Jobs().List(nil)
	must.NoError(t, err)

	created.ExpirationTTL = 10 * time.Minute
	_, _, err = tokens.Update(created, nil)
	must.ErrorContains(t, err, "cannot update expiration TTL")

	up := &api.ACLToken{AccessorID: "b306571d-a3fa-42d2-ac5b-bbe49d8c3c7f", SecretID: "c28ba0f6-ab8d-4e4d-b9f0-7f9f5d1c2e3a",
		Name: "imported", Type: "client", Policies: []string{"not-yet"}}
	got, _, err := tokens.Upload(up, nil)
	must.NoError(t, err)
	must.Eq(t, up.AccessorID, got.AccessorID)
	must.Eq(t, up.SecretID, got.SecretID)
	self, _, err := ta.Client(up.SecretID).ACLTokens().Self(nil)
	must.NoError(t, err)
	must.Eq(t, "imported", self.Name)

	refused := []struct {
		name  string
		token *api.ACLToken
		want  string
	}{
		{name: "secret in use", want: "secret ID already in use", token: &api.ACLToken{
			AccessorID: "0a5c2d7e-1111-4f00-8000-000000000001", SecretID: up.SecretID, Type: "client", Policies: []string{"x"}}},
		{name: "not a UUID", want: "invalid secret ID", token: &api.ACLToken{
			AccessorID: "0a5c2d7e-1111-4f00-8000-000000000002", SecretID: "guessable", Type: "client", Policies: []string{"x"}}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tokens.Upload(tc.token, nil)
			must.ErrorContains(t, err, tc.want)
		})
	}
	// The official client refuses to send a management upload; the server refuses it too.
	var out api.ACLToken
	_, err = c.Raw().Write("/v1/acl/token/0a5c2d7e-1111-4f00-8000-000000000003", &api.ACLToken{
		AccessorID: "0a5c2d7e-1111-4f00-8000-000000000003", SecretID: "0a5c2d7e-1111-4f00-8000-000000000004", Type: "management"}, &out, nil)
	must.ErrorContains(t, err, "cannot upload management tokens")

	// A non-management token cannot upload at all.
	_, _, err = ta.Client(created.SecretID).ACLTokens().Upload(&api.ACLToken{
		AccessorID: "0a5c2d7e-1111-4f00-8000-000000000005", SecretID: "0a5c2d7e-1111-4f00-8000-000000000006", Type: "client", Policies: []string{"x"}}, nil)
	must.ErrorContains(t, err, "Permission denied")
}

func TestACLBootstrap_InvalidSecret(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) { c.ACL.Enabled = true })
	_, _, err := ta.Client("").ACLTokens().BootstrapOpts("badtoken", nil)
	must.EqError(t, err, "Unexpected response code: 400 (invalid acl token)")
}

// TestACLOneTimeToken: a live token makes a one-time token, which is exchanged once for the
// token itself; a second exchange, an unknown secret and an anonymous caller are refused.
func TestACLOneTimeToken(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	created, _, err := ta.Client(root).ACLTokens().Create(&api.ACLToken{Name: "ott", Type: "client", Policies: []string{"p"}}, nil)
	must.NoError(t, err)

	mine := ta.Client(created.SecretID).ACLTokens()
	ott, wm, err := mine.UpsertOneTimeToken(nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)
	must.Eq(t, created.AccessorID, ott.AccessorID)
	must.True(t, ott.ExpiresAt.After(time.Now().Add(9*time.Minute)))

	got, _, err := ta.Client("").ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
	must.NoError(t, err)
	must.Eq(t, created.AccessorID, got.AccessorID)
	must.Eq(t, created.SecretID, got.SecretID)

	_, _, err = ta.Client("").ACLTokens().ExchangeOneTimeToken(ott.OneTimeSecretID, nil)
	must.ErrorContains(t, err, "403 (Permission denied: one-time token not found or expired)")
	_, _, err = ta.Client("").ACLTokens().ExchangeOneTimeToken("4ee6c8a4-0000-4000-8000-000000000000", nil)
	must.ErrorContains(t, err, "403 (Permission denied")
	_, _, err = ta.Client("").ACLTokens().UpsertOneTimeToken(nil)
	must.ErrorContains(t, err, "403 (Permission denied")
}
