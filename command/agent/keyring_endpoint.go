package agent

import (
	"crypto/x509"
	"fmt"
	"net/http"

	"github.com/go-jose/go-jose/v4"
	"github.com/nomadfork/nomad/structs"
)

// keyringList answers the root keys' metadata.
func (s *HTTPServer) keyringList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.KeyringListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "Keyring.List", &args, func(reply *structs.KeyringListResponse) (any, error) {
		return nonNil(reply.Keys), nil
	})
}

// keyringRotate makes a new active root key. Root keys here sign workload identities and
// encrypt nothing, so ?full (re-encrypt every variable) has nothing to do and ?algo may only
// name upstream's default; prepublishing (?publish_time) is not built and is refused.
func (s *HTTPServer) keyringRotate(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	if algo := q.Get("algo"); algo != "" && algo != "aes256-gcm" {
		return nil, structs.BadRequest("invalid algo %q: only aes256-gcm", algo)
	}
	if _, err := boolQuery(r, "full"); err != nil {
		return nil, err
	}
	if raw := q.Get("publish_time"); raw != "" && raw != "0" {
		return nil, structs.BadRequest("publish_time: prepublishing root keys is not supported")
	}
	args := structs.KeyringRotateRootKeyRequest{WriteRequest: writeRequest(r)}
	return write(s, w, "Keyring.Rotate", &args, wholeReply[structs.KeyringRotateRootKeyResponse])
}

// keyringDelete removes an inactive root key.
func (s *HTTPServer) keyringDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	force, err := boolQuery(r, "force")
	if err != nil {
		return nil, err
	}
	args := structs.KeyringDeleteRootKeyRequest{KeyID: r.PathValue("id"), Force: force, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "Keyring.Delete", &args)
}

// jwks answers the public root keys as a JSON Web Key Set (RFC 7517).
func (s *HTTPServer) jwks(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.KeyringListPublicRequest{QueryOptions: queryOptions(r)}
	var reply structs.KeyringListPublicResponse
	if err := s.rpc.RPC("Keyring.ListPublic", &args, &reply); err != nil {
		return nil, err
	}
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(reply.PublicKeys))}
	for _, pk := range reply.PublicKeys {
		pub, err := x509.ParsePKIXPublicKey(pk.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("root key %s: %w", pk.KeyID, err)
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: pub, KeyID: pk.KeyID, Algorithm: pk.Algorithm, Use: "sig"})
	}
	setMeta(w, &reply.QueryMeta)
	// Verifiers cache the set; a new key appears well within the time a key is used before
	// it signs anything.
	w.Header().Set("Cache-Control", "max-age=900")
	return set, nil
}
