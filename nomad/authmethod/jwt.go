package authmethod

import (
	"crypto"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/nomadfork/nomad/structs"
)

// ErrInvalidLoginToken is returned for any token that does not verify. The reason is in the
// wrapped message; it never includes the token itself.
var ErrInvalidLoginToken = errors.New("invalid login token")

// supportedAlgs are the signature algorithms a login token may use when the method names
// none: asymmetric ones only, since the method holds public keys.
var supportedAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// VerifyJWT checks a login token's signature against the method's JWTValidationPubKeys and
// its time, audience and issuer claims against the method's bounds at now. It returns the
// token's claims.
func VerifyJWT(method *structs.ACLAuthMethod, token string, now time.Time) (map[string]any, error) {
	cfg := method.Config
	if method.Type != structs.ACLAuthMethodTypeJWT || cfg == nil {
		return nil, fmt.Errorf("%w: auth-method %q is not a JWT method", ErrInvalidLoginToken, method.Name)
	}
	if len(cfg.JWTValidationPubKeys) == 0 {
		return nil, fmt.Errorf("%w: auth-method %q has no JWTValidationPubKeys (JWKS and discovery are not supported)",
			ErrInvalidLoginToken, method.Name)
	}
	algs := supportedAlgs
	if len(cfg.SigningAlgs) > 0 {
		algs = nil
		for _, a := range cfg.SigningAlgs {
			algs = append(algs, jose.SignatureAlgorithm(a))
		}
	}
	parsed, err := jwt.ParseSigned(token, algs)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidLoginToken, err)
	}
	var claims map[string]any
	var std jwt.Claims
	verified := false
	for _, pemKey := range cfg.JWTValidationPubKeys {
		key, err := structs.ParsePublicKeyPEM(pemKey)
		if err != nil {
			continue
		}
		if err := parsed.Claims(crypto.PublicKey(key), &claims, &std); err == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, fmt.Errorf("%w: signature does not verify with any of the auth-method's keys", ErrInvalidLoginToken)
	}
	if err := checkTimes(cfg, &std, now); err != nil {
		return nil, err
	}
	if len(cfg.BoundIssuer) > 0 && !slices.Contains(cfg.BoundIssuer, std.Issuer) {
		return nil, fmt.Errorf("%w: issuer %q is not bound", ErrInvalidLoginToken, std.Issuer)
	}
	if len(cfg.BoundAudiences) > 0 && !slices.ContainsFunc(cfg.BoundAudiences, func(a string) bool { return std.Audience.Contains(a) }) {
		return nil, fmt.Errorf("%w: no audience is bound", ErrInvalidLoginToken)
	}
	return claims, nil
}

func checkTimes(cfg *structs.ACLAuthMethodConfig, std *jwt.Claims, now time.Time) error {
	skew := cfg.ClockSkewLeeway
	if std.Expiry != nil && now.After(std.Expiry.Time().Add(cfg.ExpirationLeeway+skew)) {
		return fmt.Errorf("%w: token is expired", ErrInvalidLoginToken)
	}
	if std.NotBefore != nil && now.Before(std.NotBefore.Time().Add(-(cfg.NotBeforeLeeway + skew))) {
		return fmt.Errorf("%w: token is not valid yet", ErrInvalidLoginToken)
	}
	if std.IssuedAt != nil && now.Before(std.IssuedAt.Time().Add(-skew)) {
		return fmt.Errorf("%w: token is issued in the future", ErrInvalidLoginToken)
	}
	return nil
}
