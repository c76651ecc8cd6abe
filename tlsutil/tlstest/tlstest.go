// Package tlstest writes test CAs and certificates to a test's directory. Only tests import
// it, so the binary does not link testing.
package tlstest

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nomadfork/nomad/tlsutil"
	"github.com/shoenig/test/must"
)

// CA is a test CA written to disk.
type CA struct {
	CertFile string
	KeyFile  string
	certPEM  []byte
	keyPEM   []byte
	dir      string
}

// Files are one certificate and its key on disk.
type Files struct {
	CertFile string
	KeyFile  string
}

// NewCA creates a CA named name in a new temporary directory.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	dir := t.TempDir()
	certPEM, keyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{CommonName: name})
	must.NoError(t, err)
	ca := &CA{certPEM: certPEM, keyPEM: keyPEM, dir: dir,
		CertFile: filepath.Join(dir, name+"-ca.pem"), KeyFile: filepath.Join(dir, name+"-ca-key.pem")}
	must.NoError(t, os.WriteFile(ca.CertFile, certPEM, 0o644))
	must.NoError(t, os.WriteFile(ca.KeyFile, keyPEM, 0o600))
	return ca
}

// Option changes a certificate before it is issued.
type Option func(*tlsutil.CertOptions)

// Expired makes the certificate one that expired an hour ago.
func Expired(o *tlsutil.CertOptions) {
	o.NotBefore = time.Now().Add(-48 * time.Hour)
	o.NotAfter = time.Now().Add(-time.Hour)
}

// Issue writes a certificate for dnsNames (plus localhost and 127.0.0.1), usable both as a
// TLS server and a TLS client, as the agent's certificates are.
func (ca *CA) Issue(t testing.TB, name string, dnsNames []string, opts ...Option) Files {
	t.Helper()
	o := tlsutil.CertOptions{
		CommonName:  name,
		DNSNames:    append(append([]string(nil), dnsNames...), "localhost"),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		CACertPEM:   ca.certPEM,
		CAKeyPEM:    ca.keyPEM,
	}
	for _, opt := range opts {
		opt(&o)
	}
	certPEM, keyPEM, err := tlsutil.GenerateCert(o)
	must.NoError(t, err)
	f := Files{CertFile: filepath.Join(ca.dir, name+".pem"), KeyFile: filepath.Join(ca.dir, name+"-key.pem")}
	must.NoError(t, os.WriteFile(f.CertFile, certPEM, 0o644))
	must.NoError(t, os.WriteFile(f.KeyFile, keyPEM, 0o600))
	return f
}
