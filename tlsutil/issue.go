package tlsutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CAOptions describe a self-signed CA. A zero NotBefore is now; a zero NotAfter is five years
// after NotBefore.
type CAOptions struct {
	CommonName string
	NotBefore  time.Time
	NotAfter   time.Time
}

// CertOptions describe a certificate signed by the CA in CACertPEM/CAKeyPEM. A zero NotBefore
// is now; a zero NotAfter is one year after NotBefore.
type CertOptions struct {
	CommonName  string
	DNSNames    []string
	IPAddresses []net.IP
	ExtKeyUsage []x509.ExtKeyUsage
	NotBefore   time.Time
	NotAfter    time.Time
	CACertPEM   []byte
	CAKeyPEM    []byte
}

// GenerateCA returns the PEM certificate and private key (ECDSA P-256) of a new CA.
func GenerateCA(opts CAOptions) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	notBefore, notAfter := window(opts.NotBefore, opts.NotAfter, 5*365*24*time.Hour)
	cn := opts.CommonName
	if cn == "" {
		cn = "Nomad Agent CA " + serial.String()
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		SubjectKeyId:          keyID(&key.PublicKey),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	return encode(der, key)
}

// GenerateCert returns the PEM certificate and private key (ECDSA P-256) of a new leaf signed
// by the given CA.
func GenerateCert(opts CertOptions) (certPEM, keyPEM []byte, err error) {
	caCert, caKey, err := parseCA(opts.CACertPEM, opts.CAKeyPEM)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	notBefore, notAfter := window(opts.NotBefore, opts.NotAfter, 365*24*time.Hour)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: opts.CommonName},
		DNSNames:              opts.DNSNames,
		IPAddresses:           opts.IPAddresses,
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           opts.ExtKeyUsage,
		BasicConstraintsValid: true,
		SubjectKeyId:          keyID(&key.PublicKey),
		AuthorityKeyId:        caCert.SubjectKeyId,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	return encode(der, key)
}

func parseCA(certPEM, keyPEM []byte) (*x509.Certificate, any, error) {
	certs, err := parseCerts(certPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("CA certificate: %w", err)
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, nil, errors.New("CA key: no PEM private key found")
	}
	var key any
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("CA key: %w", err)
	}
	return certs[0], key, nil
}

func window(notBefore, notAfter time.Time, life time.Duration) (time.Time, time.Time) {
	if notBefore.IsZero() {
		// A minute of slack for peers whose clocks run a little behind.
		notBefore = time.Now().Add(-time.Minute)
	}
	if notAfter.IsZero() {
		notAfter = notBefore.Add(life)
	}
	return notBefore, notAfter
}

func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func keyID(pub *ecdsa.PublicKey) []byte {
	raw, _ := x509.MarshalPKIXPublicKey(pub)
	sum := sha256.Sum256(raw)
	return sum[:20]
}

func encode(der []byte, key *ecdsa.PrivateKey) ([]byte, []byte, error) {
	raw, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: raw}), nil
}
