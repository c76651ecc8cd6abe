package agent

import (
	"crypto/x509"
	"fmt"
	"net/http"

	"github.com/go-jose/go-jose/v4"
	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) registerKeyringRoutes(mux *http.ServeMux) {
	// No ACL, as upstream: verifiers of workload identities fetch the public keys anonymously.
	s.handle(mux, "/.well-known/jwks.json", methods{"GET": s.jwks})
}

// jwks answers the public root keys as a JSON Web Key Set (RFC 7517).
func (s *HTTPServer) jwks(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.KeyringListPublicRequest{QueryOptions: queryOptions(r)}
	var reply structs.KeyringListPublicResponse
	if err := s.srv.Endpoints.Keyring.ListPublic(&args, &reply); err != nil {
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
