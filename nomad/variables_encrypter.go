package nomad

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/nomadfork/nomad/structs"
)

// Variables are encrypted with AES-256-GCM under a key derived (HKDF-SHA256) from a root
// key's private half, which only servers hold. The leader encrypts before raftApply, so the
// log, snapshots and state store hold ciphertext; any server can decrypt with the root key
// the ciphertext names. The nonce is random per write and stored in front of the
// ciphertext; the namespace and path are the additional data, so ciphertext copied to
// another variable does not decrypt.

// variableKeyInfo separates the variables key from anything else derived from a root key.
const variableKeyInfo = "nomadfork variables v1"

// errNoActiveRootKey is answered while the leader has not made the first root key yet.
var errNoActiveRootKey = structs.NewErrCode(500, "no active root key to encrypt variables with")

// variableCiphers caches one AEAD per root key ID. Root key material never changes for an ID
// (state refuses it), so an entry never goes stale.
type variableCiphers struct {
	mu    sync.Mutex
	byKey map[string]cipher.AEAD
}

func (c *variableCiphers) aead(key *structs.RootKey) (cipher.AEAD, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.byKey[key.KeyID]; ok {
		return a, nil
	}
	if len(key.PrivateKey) == 0 {
		return nil, fmt.Errorf("root key %s has no private key", key.KeyID)
	}
	secret, err := hkdf.Key(sha256.New, key.PrivateKey, []byte(key.KeyID), variableKeyInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if c.byKey == nil {
		c.byKey = map[string]cipher.AEAD{}
	}
	c.byKey[key.KeyID] = a
	return a, nil
}

func variableAAD(namespace, path string) []byte {
	return []byte(namespace + "\x00" + path)
}

// encryptVariable seals v's items with the active root key.
func (s *Server) encryptVariable(v *structs.VariableDecrypted) (*structs.VariableEncrypted, error) {
	keys, err := s.State().RootKeys(nil)
	if err != nil {
		return nil, err
	}
	var active *structs.RootKey
	for _, k := range keys {
		if k.State == structs.RootKeyStateActive {
			active = k
		}
	}
	if active == nil {
		return nil, errNoActiveRootKey
	}
	out := &structs.VariableEncrypted{VariableMetadata: v.VariableMetadata.Copy()}
	if len(v.Items) == 0 {
		return out, nil
	}
	aead, err := s.varCiphers.aead(active)
	if err != nil {
		return nil, err
	}
	plain, err := json.Marshal(v.Items)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out.Data = aead.Seal(nonce, nonce, plain, variableAAD(v.Namespace, v.Path))
	out.KeyID = active.KeyID
	return out, nil
}

// decryptVariable opens v's items with the root key that sealed them.
func (s *Server) decryptVariable(v *structs.VariableEncrypted) (*structs.VariableDecrypted, error) {
	out := &structs.VariableDecrypted{VariableMetadata: v.VariableMetadata.Copy()}
	if len(v.Data) == 0 {
		return out, nil
	}
	keys, err := s.State().RootKeys(nil)
	if err != nil {
		return nil, err
	}
	var key *structs.RootKey
	for _, k := range keys {
		if k.KeyID == v.KeyID {
			key = k
		}
	}
	if key == nil {
		return nil, fmt.Errorf("variable %q: root key %s is not in the keyring", v.Path, v.KeyID)
	}
	aead, err := s.varCiphers.aead(key)
	if err != nil {
		return nil, err
	}
	if len(v.Data) < aead.NonceSize() {
		return nil, errors.New("variable data is shorter than its nonce")
	}
	nonce, sealed := v.Data[:aead.NonceSize()], v.Data[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, sealed, variableAAD(v.Namespace, v.Path))
	if err != nil {
		return nil, fmt.Errorf("variable %q: decrypting: %w", v.Path, err)
	}
	if err := json.Unmarshal(plain, &out.Items); err != nil {
		return nil, fmt.Errorf("variable %q: decoding items: %w", v.Path, err)
	}
	return out, nil
}
