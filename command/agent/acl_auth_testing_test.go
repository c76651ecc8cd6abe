package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// testJWTKey is the signing key of the JWT auth methods of this package's tests.
var testJWTKey = sync.OnceValue(func() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
})

// testJWTPubPEM is testJWTKey's public half as a PEM block, as JWTValidationPubKeys holds it.
func testJWTPubPEM(t *testing.T) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&testJWTKey().PublicKey)
	must.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// signTestJWT signs claims with testJWTKey.
func signTestJWT(t *testing.T, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: testJWTKey()}, nil)
	must.NoError(t, err)
	raw, err := jwt.Signed(signer).Claims(claims).Serialize()
	must.NoError(t, err)
	return raw
}

// testJWTMethod is a JWT auth method trusting testJWTKey.
func testJWTMethod(t *testing.T, name string) *api.ACLAuthMethod {
	return &api.ACLAuthMethod{
		Name: name, Type: api.ACLAuthMethodTypeJWT, TokenLocality: api.ACLAuthMethodTokenLocalityLocal,
		MaxTokenTTL: time.Hour,
		Config: &api.ACLAuthMethodConfig{
			JWTValidationPubKeys: []string{testJWTPubPEM(t)},
			BoundAudiences:       []string{"nomad"},
			BoundIssuer:          []string{"https://issuer.test"},
			ClaimMappings:        map[string]string{"sub": "user"},
			ListClaimMappings:    map[string]string{"groups": "groups"},
		},
	}
}
