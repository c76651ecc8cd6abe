package structs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

// The private half is encoded for Raft (msgpack) and dropped from JSON, so no API, event or
// log line that marshals a RootKey can show it.
func TestSecurity_RootKeyPrivateHalfNotInJSON(t *testing.T) {
	key := &RootKey{KeyID: "k1", Algorithm: RootKeyAlgorithm, PublicKey: []byte("public"), PrivateKey: []byte("secret-material")}

	raw, err := json.Marshal(key)
	must.NoError(t, err)
	must.False(t, strings.Contains(string(raw), "PrivateKey"), must.Sprint(string(raw)))
	must.False(t, strings.Contains(string(raw), "c2VjcmV0"), must.Sprint(string(raw))) // base64 of "secret"

	buf, err := Encode(KeyringUpsertRootKeyRequestType, &KeyringUpsertRootKeyRequest{RootKey: key})
	must.NoError(t, err)
	var got KeyringUpsertRootKeyRequest
	must.NoError(t, Decode(buf[1:], &got))
	must.Eq(t, []byte("secret-material"), got.RootKey.PrivateKey)

	meta, err := json.Marshal(key.Meta())
	must.NoError(t, err)
	must.False(t, strings.Contains(string(meta), "c2VjcmV0"))
}
