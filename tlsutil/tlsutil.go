package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"
)

// Config names the files of the tls block. CAFile may be empty only for an HTTPS listener
// that asks no client for a certificate.
type Config struct {
	CAFile   string
	CertFile string
	KeyFile  string
	// MinVersion is tls_min_version: "tls12" (the default when empty) or "tls13".
	MinVersion string
}

// material is one consistent load of the three files; Reload swaps it whole, so a handshake
// never sees a new certificate with an old CA or the reverse.
type material struct {
	cert *tls.Certificate
	pool *x509.CertPool
}

// Wrapper holds the current TLS material. Every tls.Config it hands out reads the material at
// handshake time, so a Reload applies to the next connection without restarting a listener.
type Wrapper struct {
	cfg        Config
	minVersion uint16
	cur        atomic.Pointer[material]
}

// ParseMinVersion reads tls_min_version. TLS 1.0 and 1.1 are refused outright: both are
// deprecated (RFC 8996) and no Nomad tool needs them.
func ParseMinVersion(s string) (uint16, error) {
	switch s {
	case "", "tls12":
		return tls.VersionTLS12, nil
	case "tls13":
		return tls.VersionTLS13, nil
	case "tls10", "tls11":
		return 0, fmt.Errorf("tls.tls_min_version: %q is deprecated (RFC 8996) and not accepted; use \"tls12\" or \"tls13\"", s)
	default:
		return 0, fmt.Errorf("tls.tls_min_version: must be \"tls12\" or \"tls13\", got %q", s)
	}
}

// New loads the files and checks them: each parses, the key matches the certificate, the
// certificate is valid now and (with a CA) chains to the CA. Every error names the file.
func New(cfg Config) (*Wrapper, error) {
	v, err := ParseMinVersion(cfg.MinVersion)
	if err != nil {
		return nil, err
	}
	w := &Wrapper{cfg: cfg, minVersion: v}
	if err := w.Reload(); err != nil {
		return nil, err
	}
	return w, nil
}

// Reload reads the files again; on any error the material in use stays and the error says
// which file is wrong.
func (w *Wrapper) Reload() error {
	m, err := load(w.cfg, time.Now())
	if err != nil {
		return err
	}
	w.cur.Store(m)
	return nil
}

// Leaf is the certificate currently presented (for tests and the agent's log).
func (w *Wrapper) Leaf() *x509.Certificate { return w.cur.Load().cert.Leaf }

func load(cfg Config, now time.Time) (*material, error) {
	if cfg.CertFile == "" || cfg.KeyFile == "" {
		return nil, errors.New("tls: cert_file and key_file must both be set")
	}
	m := &material{}
	if cfg.CAFile != "" {
		pool, err := loadCA(cfg.CAFile, now)
		if err != nil {
			return nil, err
		}
		m.pool = pool
	}
	certPEM, err := os.ReadFile(cfg.CertFile)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %s: %w", cfg.CertFile, err)
	}
	certs, err := parseCerts(certPEM)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %s: %w", cfg.CertFile, err)
	}
	keyPEM, err := os.ReadFile(cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls.key_file %s: %w", cfg.KeyFile, err)
	}
	if block, _ := pem.Decode(keyPEM); block == nil {
		return nil, fmt.Errorf("tls.key_file %s: no PEM private key found", cfg.KeyFile)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls.key_file %s does not go with tls.cert_file %s: %w", cfg.KeyFile, cfg.CertFile, err)
	}
	leaf := certs[0]
	pair.Leaf = leaf
	if err := checkValidity(leaf, now); err != nil {
		return nil, fmt.Errorf("tls.cert_file %s: %w", cfg.CertFile, err)
	}
	if m.pool != nil {
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := leaf.Verify(x509.VerifyOptions{Roots: m.pool, Intermediates: inter, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		if err != nil {
			return nil, fmt.Errorf("tls.cert_file %s is not signed by the CA in tls.ca_file %s: %w", cfg.CertFile, cfg.CAFile, err)
		}
	}
	m.cert = &pair
	return m, nil
}

func loadCA(path string, now time.Time) (*x509.CertPool, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tls.ca_file %s: %w", path, err)
	}
	certs, err := parseCerts(raw)
	if err != nil {
		return nil, fmt.Errorf("tls.ca_file %s: %w", path, err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		if !c.IsCA {
			return nil, fmt.Errorf("tls.ca_file %s: certificate %q is not a CA certificate", path, c.Subject.CommonName)
		}
		if err := checkValidity(c, now); err != nil {
			return nil, fmt.Errorf("tls.ca_file %s: %w", path, err)
		}
		pool.AddCert(c)
	}
	return pool, nil
}

// parseCerts reads every CERTIFICATE block; anything else in the file is an error, so a key
// pasted into a certificate file is reported rather than skipped.
func parseCerts(raw []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := raw; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block %d is a %q, not a CERTIFICATE", len(out)+1, block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d is malformed: %w", len(out)+1, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return out, nil
}

func checkValidity(c *x509.Certificate, now time.Time) error {
	if now.After(c.NotAfter) {
		return fmt.Errorf("certificate %q expired at %s", c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(c.NotBefore) {
		return fmt.Errorf("certificate %q is not valid before %s", c.Subject.CommonName, c.NotBefore.UTC().Format(time.RFC3339))
	}
	return nil
}

// IncomingConfig is the tls.Config of a listener. With requireClient every peer must present
// a certificate that chains to the CA (and is valid now) before the handshake completes.
func (w *Wrapper) IncomingConfig(requireClient bool) *tls.Config {
	return &tls.Config{
		MinVersion: w.minVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			m := w.cur.Load()
			c := &tls.Config{MinVersion: w.minVersion, Certificates: []tls.Certificate{*m.cert}}
			if requireClient {
				if m.pool == nil {
					return nil, errors.New("no CA to verify client certificates with")
				}
				c.ClientAuth = tls.RequireAndVerifyClientCert
				c.ClientCAs = m.pool
			}
			return c, nil
		},
	}
}

// OutgoingConfig is the tls.Config of a dialer presenting this agent's certificate. With a
// serverName the peer must present it; without one its certificate must still chain to the
// CA (verify_server_hostname = false checks the CA only, as upstream's does).
func (w *Wrapper) OutgoingConfig(serverName string) *tls.Config {
	m := w.cur.Load()
	c := &tls.Config{MinVersion: w.minVersion, Certificates: []tls.Certificate{*m.cert}, RootCAs: m.pool}
	if serverName != "" {
		c.ServerName = serverName
		return c
	}
	// The standard verification always checks a name; this replaces it with the chain check
	// alone, never with nothing.
	c.InsecureSkipVerify = true
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the server presented no certificate")
		}
		inter := x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			inter.AddCert(ic)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: m.pool, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		return err
	}
	return c
}

// HasDNSName reports whether c names exactly name among its DNS SANs. Only SANs count: the
// common name is not a host name for any verifier since Go 1.15.
func HasDNSName(c *x509.Certificate, name string) bool {
	return c != nil && slices.Contains(c.DNSNames, name)
}
