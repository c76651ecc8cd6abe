package nomad

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// waitRootKeys polls until the server's state holds n root keys.
func waitRootKeys(t *testing.T, srv *Server, n int) []*structs.RootKey {
	t.Helper()
	var keys []*structs.RootKey
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		var err error
		keys, err = srv.fsm.State().RootKeys(nil)
		return err == nil && len(keys) == n
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
	return keys
}

func TestKeyring_FirstLeaderCreatesOneKey(t *testing.T) {
	srv := testServer(t, nil)
	keys := waitRootKeys(t, srv, 1)
	key := keys[0]
	must.Eq(t, structs.RootKeyAlgorithm, key.Algorithm)
	must.Eq(t, structs.RootKeyStateActive, key.State)
	must.NotEq(t, "", key.KeyID)
	pub, err := x509.ParsePKIXPublicKey(key.PublicKey)
	must.NoError(t, err)
	priv, err := x509.ParsePKCS8PrivateKey(key.PrivateKey)
	must.NoError(t, err)
	// The two halves belong together.
	must.True(t, priv.(*rsa.PrivateKey).PublicKey.Equal(pub))

	var reply structs.KeyringListPublicResponse
	must.NoError(t, srv.Endpoints.Keyring.ListPublic(&structs.KeyringListPublicRequest{}, &reply))
	must.Len(t, 1, reply.PublicKeys)
	must.Eq(t, key.KeyID, reply.PublicKeys[0].KeyID)
	must.Eq(t, key.PublicKey, reply.PublicKeys[0].PublicKey)
	must.Positive(t, reply.Index)
}

// A restarted leader finds the key its predecessor replicated and makes no second one.
func TestKeyring_RestartKeepsTheKey(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir })
	first := waitRootKeys(t, srv, 1)[0]
	must.NoError(t, srv.Shutdown())

	again, err := restart(t, dir)
	must.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must.NoError(t, again.WaitForLeader(ctx))
	keys := waitRootKeys(t, again, 1)
	must.Eq(t, first.KeyID, keys[0].KeyID)
	must.Eq(t, first.PrivateKey, keys[0].PrivateKey)
}

// The key travels through Raft whole: a follower (or a server restoring a snapshot) must be
// able to sign, so the private half must survive the log encoding.
func TestSecurity_RootKeyPrivateHalfSurvivesRaftOnly(t *testing.T) {
	key, err := newRootKey(time.Unix(0, 1))
	must.NoError(t, err)
	buf, err := structs.EncodeEntry(structs.KeyringUpsertRootKeyRequestType, &structs.KeyringUpsertRootKeyRequest{RootKey: key})
	must.NoError(t, err)
	e, err := structs.CheckEntry(buf)
	must.NoError(t, err)
	must.Eq(t, structs.KeyringUpsertRootKeyRequestType, e.Type)
	var got structs.KeyringUpsertRootKeyRequest
	must.NoError(t, structs.Decode(e.Payload, &got))
	must.Eq(t, key.PrivateKey, got.RootKey.PrivateKey)
}
