package structs

// Root keys sign workload identities. The leader makes the first one when it first leads and
// replicates it through Raft, so every server can sign and answer /.well-known/jwks.json.
//
// The private half must never leave the servers: it is in Raft entries and snapshots (which
// only servers hold), and nowhere else. Every API answer is built from RootKeyMeta or
// RootKeyPublic, the events of the table are off (state/events.go), and RootKey's private
// field is dropped by encoding/json so a log line or an API that marshals a RootKey by
// mistake shows no secret.

// RootKeyAlgorithm is the signing algorithm of new keys: RS256, as upstream's default, which
// every OIDC consumer (Vault, Consul, cloud providers) accepts.
const RootKeyAlgorithm = "RS256"

// RootKeyBits is the RSA modulus size of new keys.
const RootKeyBits = 2048

// Root key states, as upstream names them.
const (
	RootKeyStateActive   = "active"
	RootKeyStateInactive = "inactive"
)

// RootKey is one signing key.
type RootKey struct {
	KeyID      string
	Algorithm  string
	State      string
	CreateTime int64 // Unix nanoseconds, set by the leader
	// PublicKey is the PKIX DER encoding of the public key.
	PublicKey []byte
	// PrivateKey is the PKCS #8 DER encoding of the private key. The codec tag keeps it in Raft
	// entries and snapshots; the json tag keeps it out of anything encoded as JSON.
	PrivateKey []byte `codec:"PrivateKey" json:"-"`

	CreateIndex uint64
	ModifyIndex uint64
}

// Meta is the key without key material, as GET /v1/operator/keyring/keys lists it.
func (k *RootKey) Meta() *RootKeyMeta {
	return &RootKeyMeta{
		KeyID: k.KeyID, Algorithm: k.Algorithm, State: k.State, CreateTime: k.CreateTime,
		CreateIndex: k.CreateIndex, ModifyIndex: k.ModifyIndex,
	}
}

// Public is the key's public half.
func (k *RootKey) Public() *RootKeyPublic {
	return &RootKeyPublic{KeyID: k.KeyID, Algorithm: k.Algorithm, PublicKey: k.PublicKey, CreateTime: k.CreateTime}
}

// RootKeyMeta is the wire shape of api.RootKeyMeta.
type RootKeyMeta struct {
	KeyID       string
	Algorithm   string
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
	State       string
}

// RootKeyPublic is what the JWKS is built from.
type RootKeyPublic struct {
	KeyID      string
	Algorithm  string
	PublicKey  []byte // PKIX DER
	CreateTime int64
}

// KeyringUpsertRootKeyRequest stores one root key (new, or with a changed state).
type KeyringUpsertRootKeyRequest struct {
	RootKey *RootKey
	WriteRequest
}

// KeyringListPublicRequest asks for the public keys of every root key.
type KeyringListPublicRequest struct {
	QueryOptions
}

// KeyringListPublicResponse holds the public keys, oldest first.
type KeyringListPublicResponse struct {
	PublicKeys []*RootKeyPublic
	QueryMeta
}

// ActorKeyring is who writes the keys the leader makes itself.
var ActorKeyring = &Actor{Type: ActorTypeSystem, Name: "keyring"}

// KeyringListRequest lists the root keys' metadata (management only).
type KeyringListRequest struct {
	QueryOptions
}

// KeyringListResponse holds the keys' metadata, oldest first; never key material.
type KeyringListResponse struct {
	Keys []*RootKeyMeta
	QueryMeta
}

// KeyringRotateRootKeyRequest stores a new active root key and makes every other active key
// inactive, in one Raft entry. The leader generates the key before the apply.
type KeyringRotateRootKeyRequest struct {
	RootKey *RootKey
	WriteRequest
}

// KeyringRotateRootKeyResponse answers a rotation with the new key's metadata (the wire
// shape of upstream's {"Key": …}).
type KeyringRotateRootKeyResponse struct {
	Key *RootKeyMeta
	WriteMeta
}

// KeyringDeleteRootKeyRequest removes an inactive root key. Force is accepted for upstream's
// API; with no variables encrypted by keys here, it changes nothing.
type KeyringDeleteRootKeyRequest struct {
	KeyID string
	Force bool
	WriteRequest
}
