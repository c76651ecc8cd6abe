package structs

import (
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"regexp"
	"time"
)

// Auth method types and token localities, as the official client spells them.
const (
	ACLAuthMethodTypeJWT  = "JWT"
	ACLAuthMethodTypeOIDC = "OIDC"

	ACLAuthMethodTokenLocalityLocal  = "local"
	ACLAuthMethodTokenLocalityGlobal = "global"

	// ACLAuthMethodDefaultTokenNameFormat is the token name format of a method that names none.
	ACLAuthMethodDefaultTokenNameFormat = "${auth_method_type}-${auth_method_name}"

	// RedactedSecret stands in for a stored secret in every read. A write that sends it back
	// keeps the stored secret, so a read-modify-write does not erase it.
	RedactedSecret = "redacted"
)

var validAuthMethodName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// ACLAuthMethod is a way to log in with a token another system issued (a JWT, or OIDC).
// Config may hold secrets (the OIDC client secret, a client assertion key): every read
// goes through Sanitized, and no event publishes the method.
type ACLAuthMethod struct {
	Name            string
	Type            string
	TokenLocality   string
	TokenNameFormat string
	MaxTokenTTL     time.Duration
	Default         bool
	Config          *ACLAuthMethodConfig
	CreateTime      time.Time
	ModifyTime      time.Time
	CreateIndex     uint64
	ModifyIndex     uint64
}

// ACLAuthMethodConfig is the type-specific part of a method, field for field the official
// client's.
type ACLAuthMethodConfig struct {
	JWTValidationPubKeys []string
	JWKSURL              string
	OIDCDiscoveryURL     string
	OIDCClientID         string
	OIDCClientSecret     string
	OIDCClientAssertion  *OIDCClientAssertion
	OIDCEnablePKCE       bool
	OIDCDisableUserInfo  bool
	OIDCScopes           []string
	BoundAudiences       []string
	BoundIssuer          []string
	AllowedRedirectURIs  []string
	DiscoveryCaPem       []string
	JWKSCACert           string
	SigningAlgs          []string
	ExpirationLeeway     time.Duration
	NotBeforeLeeway      time.Duration
	ClockSkewLeeway      time.Duration
	ClaimMappings        map[string]string
	ListClaimMappings    map[string]string
	VerboseLogging       bool
}

// OIDCClientAssertion configures a signed client assertion in place of a client secret.
type OIDCClientAssertion struct {
	Audience     []string
	KeySource    string
	KeyAlgorithm string
	PrivateKey   *OIDCClientAssertionKey
	ExtraHeaders map[string]string
}

// OIDCClientAssertionKey is the key of a client assertion; PemKey is a secret.
type OIDCClientAssertionKey struct {
	PemKey      string
	PemKeyFile  string
	KeyIDHeader string
	KeyID       string
	PemCert     string
	PemCertFile string
}

// ACLAuthMethodListStub is the list form of a method: no configuration at all.
type ACLAuthMethodListStub struct {
	Name        string
	Type        string
	Default     bool
	CreateIndex uint64
	ModifyIndex uint64
}

// Stub returns the list form.
func (m *ACLAuthMethod) Stub() *ACLAuthMethodListStub {
	return &ACLAuthMethodListStub{Name: m.Name, Type: m.Type, Default: m.Default, CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex}
}

// Sanitized returns a copy whose secrets read RedactedSecret.
func (m *ACLAuthMethod) Sanitized() *ACLAuthMethod {
	return copyWith(m, func(c *ACLAuthMethod) {
		if m.Config != nil {
			cfg := *m.Config
			if cfg.OIDCClientSecret != "" {
				cfg.OIDCClientSecret = RedactedSecret
			}
			if a := cfg.OIDCClientAssertion; a != nil && a.PrivateKey != nil && a.PrivateKey.PemKey != "" {
				ac, kc := *a, *a.PrivateKey
				kc.PemKey = RedactedSecret
				ac.PrivateKey = &kc
				cfg.OIDCClientAssertion = &ac
			}
			c.Config = &cfg
		}
	})
}

// KeepSecretsOf gives m the stored secrets of existing where m sends back RedactedSecret.
func (m *ACLAuthMethod) KeepSecretsOf(existing *ACLAuthMethod) {
	if m.Config == nil || existing == nil || existing.Config == nil {
		return
	}
	if m.Config.OIDCClientSecret == RedactedSecret {
		m.Config.OIDCClientSecret = existing.Config.OIDCClientSecret
	}
	a, old := m.Config.OIDCClientAssertion, existing.Config.OIDCClientAssertion
	if a != nil && a.PrivateKey != nil && a.PrivateKey.PemKey == RedactedSecret && old != nil && old.PrivateKey != nil {
		k := *a.PrivateKey
		k.PemKey = old.PrivateKey.PemKey
		a.PrivateKey = &k
	}
}

// Validate checks a method before it is written; errors are 400s naming the field.
func (m *ACLAuthMethod) Validate() error {
	if !validAuthMethodName.MatchString(m.Name) {
		return BadRequest("invalid Name %q: 1-128 characters of a-z, A-Z, 0-9, '-' and '_'", m.Name)
	}
	switch m.Type {
	case ACLAuthMethodTypeJWT, ACLAuthMethodTypeOIDC:
	default:
		return BadRequest("invalid Type %q: must be %s or %s", m.Type, ACLAuthMethodTypeJWT, ACLAuthMethodTypeOIDC)
	}
	switch m.TokenLocality {
	case ACLAuthMethodTokenLocalityLocal, ACLAuthMethodTokenLocalityGlobal:
	default:
		return BadRequest("invalid TokenLocality %q: must be %s or %s", m.TokenLocality,
			ACLAuthMethodTokenLocalityLocal, ACLAuthMethodTokenLocalityGlobal)
	}
	if m.MaxTokenTTL <= 0 {
		return BadRequest("invalid MaxTokenTTL %s: must be greater than zero", m.MaxTokenTTL)
	}
	cfg := m.Config
	if cfg == nil {
		return BadRequest("missing Config")
	}
	if cfg.ExpirationLeeway < 0 || cfg.NotBeforeLeeway < 0 || cfg.ClockSkewLeeway < 0 {
		return BadRequest("invalid Config: ExpirationLeeway, NotBeforeLeeway and ClockSkewLeeway must not be negative")
	}
	switch m.Type {
	case ACLAuthMethodTypeJWT:
		n := 0
		for _, set := range []bool{cfg.JWKSURL != "", len(cfg.JWTValidationPubKeys) > 0, cfg.OIDCDiscoveryURL != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return BadRequest("invalid Config: a JWT method needs exactly one of JWKSURL, JWTValidationPubKeys or OIDCDiscoveryURL")
		}
		for i, k := range cfg.JWTValidationPubKeys {
			if _, err := ParsePublicKeyPEM(k); err != nil {
				return BadRequest("invalid Config.JWTValidationPubKeys[%d]: %v", i, err)
			}
		}
	case ACLAuthMethodTypeOIDC:
		if cfg.OIDCDiscoveryURL == "" {
			return BadRequest("missing Config.OIDCDiscoveryURL: an OIDC method needs it")
		}
		if cfg.OIDCClientID == "" {
			return BadRequest("missing Config.OIDCClientID: an OIDC method needs it")
		}
	}
	return nil
}

// ParsePublicKeyPEM reads one PEM public key (PKIX, or the key of a certificate).
func ParsePublicKeyPEM(s string) (crypto.PublicKey, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, fmt.Errorf("not a PEM block")
	}
	if block.Type == "CERTIFICATE" {
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		return cert.PublicKey, nil
	}
	return x509.ParsePKIXPublicKey(block.Bytes)
}

// MarshalJSON writes MaxTokenTTL as a duration string, as the official client reads it.
func (m *ACLAuthMethod) MarshalJSON() ([]byte, error) {
	type plain ACLAuthMethod
	return json.Marshal(&struct {
		MaxTokenTTL string
		*plain
	}{MaxTokenTTL: durationString(m.MaxTokenTTL), plain: (*plain)(m)})
}

// UnmarshalJSON reads MaxTokenTTL as a duration string or nanoseconds.
func (m *ACLAuthMethod) UnmarshalJSON(data []byte) error {
	type plain ACLAuthMethod
	aux := struct {
		*plain
		MaxTokenTTL any
	}{plain: (*plain)(m)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	return decodeDuration("MaxTokenTTL", aux.MaxTokenTTL, &m.MaxTokenTTL)
}

// MarshalJSON writes the leeways as duration strings.
func (c *ACLAuthMethodConfig) MarshalJSON() ([]byte, error) {
	type plain ACLAuthMethodConfig
	return json.Marshal(&struct {
		ExpirationLeeway string
		NotBeforeLeeway  string
		ClockSkewLeeway  string
		*plain
	}{
		ExpirationLeeway: durationString(c.ExpirationLeeway),
		NotBeforeLeeway:  durationString(c.NotBeforeLeeway),
		ClockSkewLeeway:  durationString(c.ClockSkewLeeway),
		plain:            (*plain)(c),
	})
}

// UnmarshalJSON reads the leeways as duration strings or nanoseconds.
func (c *ACLAuthMethodConfig) UnmarshalJSON(data []byte) error {
	type plain ACLAuthMethodConfig
	aux := struct {
		*plain
		ExpirationLeeway any
		NotBeforeLeeway  any
		ClockSkewLeeway  any
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := decodeDuration("Config.ExpirationLeeway", aux.ExpirationLeeway, &c.ExpirationLeeway); err != nil {
		return err
	}
	if err := decodeDuration("Config.NotBeforeLeeway", aux.NotBeforeLeeway, &c.NotBeforeLeeway); err != nil {
		return err
	}
	return decodeDuration("Config.ClockSkewLeeway", aux.ClockSkewLeeway, &c.ClockSkewLeeway)
}

// durationString writes a duration as the official client reads it: "" when unset.
func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func decodeDuration(field string, v any, out *time.Duration) error {
	switch v := v.(type) {
	case nil:
	case string:
		if v == "" {
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return BadRequest("invalid %s %q: %v", field, v, err)
		}
		*out = d
	case float64:
		*out = time.Duration(v)
	default:
		return BadRequest("invalid %s: must be a duration string", field)
	}
	return nil
}

// ACLAuthMethodUpsertRequest writes auth methods; the leader has fixed their times.
type ACLAuthMethodUpsertRequest struct {
	AuthMethods []*ACLAuthMethod
	Actor       *Actor
	WriteRequest
}

// ACLAuthMethodUpsertResponse returns the methods as written, secrets redacted.
type ACLAuthMethodUpsertResponse struct {
	AuthMethods []*ACLAuthMethod
	WriteMeta
}

// ACLAuthMethodDeleteRequest deletes auth methods by name, with their binding rules.
type ACLAuthMethodDeleteRequest struct {
	Names []string
	Actor *Actor
	WriteRequest
}

// ACLLoginRequest exchanges a token another system issued (LoginToken) for an ACL token
// through the named auth method. LoginToken is a credential: never logged or echoed.
type ACLLoginRequest struct {
	AuthMethodName string
	LoginToken     string
	WriteRequest
}

// ACLAuthMethodEvent is the payload of events on TopicACLAuthMethod; the method's secrets
// are always redacted.
type ACLAuthMethodEvent struct {
	AuthMethod *ACLAuthMethod
}
