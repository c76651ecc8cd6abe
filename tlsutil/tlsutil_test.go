package tlsutil_test

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/nomadfork/nomad/tlsutil"
	"github.com/nomadfork/nomad/tlsutil/tlstest"
	"github.com/shoenig/test/must"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	must.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestSecurity_TLSBadFilesAreRefusedNamingTheFile(t *testing.T) {
	ca := tlstest.NewCA(t, "good")
	other := tlstest.NewCA(t, "other")
	good := ca.Issue(t, "server", []string{"server.global.nomad"})
	expired := ca.Issue(t, "expired", []string{"server.global.nomad"}, tlstest.Expired)
	foreign := other.Issue(t, "foreign", []string{"server.global.nomad"})
	garbage := write(t, "garbage.pem", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
	notPEM := write(t, "plain.txt", "hello")

	cases := []struct {
		name string
		cfg  tlsutil.Config
		want []string
	}{
		{name: "malformed certificate", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: garbage, KeyFile: good.KeyFile},
			want: []string{"tls.cert_file " + garbage, "malformed"}},
		{name: "certificate file without PEM", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: notPEM, KeyFile: good.KeyFile},
			want: []string{"tls.cert_file " + notPEM, "no PEM certificate"}},
		{name: "key in place of a certificate", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: good.KeyFile, KeyFile: good.KeyFile},
			want: []string{"tls.cert_file " + good.KeyFile, "not a CERTIFICATE"}},
		{name: "malformed CA", cfg: tlsutil.Config{CAFile: garbage, CertFile: good.CertFile, KeyFile: good.KeyFile},
			want: []string{"tls.ca_file " + garbage, "malformed"}},
		{name: "leaf as CA", cfg: tlsutil.Config{CAFile: good.CertFile, CertFile: good.CertFile, KeyFile: good.KeyFile},
			want: []string{"tls.ca_file " + good.CertFile, "not a CA certificate"}},
		{name: "missing key", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: good.CertFile, KeyFile: "/nonexistent/key.pem"},
			want: []string{"tls.key_file /nonexistent/key.pem", "no such file"}},
		{name: "key of another certificate", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: good.CertFile, KeyFile: foreign.KeyFile},
			want: []string{"tls.key_file " + foreign.KeyFile, "does not go with tls.cert_file " + good.CertFile}},
		{name: "wrong CA", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: foreign.CertFile, KeyFile: foreign.KeyFile},
			want: []string{"tls.cert_file " + foreign.CertFile, "is not signed by the CA in tls.ca_file " + ca.CertFile}},
		{name: "expired certificate", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: expired.CertFile, KeyFile: expired.KeyFile},
			want: []string{"tls.cert_file " + expired.CertFile, "expired at"}},
		{name: "TLS 1.1", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: good.CertFile, KeyFile: good.KeyFile, MinVersion: "tls11"},
			want: []string{"tls.tls_min_version", "deprecated"}},
		{name: "unknown version", cfg: tlsutil.Config{CAFile: ca.CertFile, CertFile: good.CertFile, KeyFile: good.KeyFile, MinVersion: "ssl3"},
			want: []string{"tls.tls_min_version", `"ssl3"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tlsutil.New(tc.cfg)
			must.Error(t, err)
			for _, w := range tc.want {
				must.StrContains(t, err.Error(), w)
			}
		})
	}
	t.Run("good files", func(t *testing.T) {
		_, err := tlsutil.New(tlsutil.Config{CAFile: ca.CertFile, CertFile: good.CertFile, KeyFile: good.KeyFile, MinVersion: "tls13"})
		must.NoError(t, err)
	})
}

// serve accepts TLS connections with w until the test ends.
func serve(t *testing.T, w *tlsutil.Wrapper) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", w.IncomingConfig(true))
	must.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func TestTLS_ReloadSwapsTheCertificateAndKeepsItOnError(t *testing.T) {
	ca := tlstest.NewCA(t, "good")
	first := ca.Issue(t, "server", []string{"server.global.nomad"})
	w, err := tlsutil.New(tlsutil.Config{CAFile: ca.CertFile, CertFile: first.CertFile, KeyFile: first.KeyFile})
	must.NoError(t, err)
	addr := serve(t, w)
	client := ca.Issue(t, "client", []string{"client.global.nomad"})
	cw, err := tlsutil.New(tlsutil.Config{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile})
	must.NoError(t, err)
	presented := func() string {
		conn, err := tls.Dial("tcp", addr, cw.OutgoingConfig("server.global.nomad"))
		must.NoError(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	before := presented()
	must.Eq(t, w.Leaf().SerialNumber.String(), before)

	// A new certificate in the same files is served after Reload, without a new listener.
	second := ca.Issue(t, "server2", []string{"server.global.nomad"})
	copyFile(t, second.CertFile, first.CertFile)
	copyFile(t, second.KeyFile, first.KeyFile)
	must.NoError(t, w.Reload())
	after := presented()
	must.NotEq(t, before, after)

	// A broken file is reported and the certificate in use stays.
	must.NoError(t, os.WriteFile(first.CertFile, []byte("broken"), 0o600))
	must.ErrorContains(t, w.Reload(), "tls.cert_file "+first.CertFile)
	must.Eq(t, after, presented())
}

func TestSecurity_TLSOutgoingWithoutHostnameStillChecksTheCA(t *testing.T) {
	ca := tlstest.NewCA(t, "good")
	other := tlstest.NewCA(t, "other")
	foreign := other.Issue(t, "foreign", []string{"server.global.nomad"})
	fw, err := tlsutil.New(tlsutil.Config{CertFile: foreign.CertFile, KeyFile: foreign.KeyFile})
	must.NoError(t, err)
	// A listener with a certificate from another CA, that asks nothing of the client.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", fw.IncomingConfig(false))
	must.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	mine := ca.Issue(t, "client", []string{"client.global.nomad"})
	cw, err := tlsutil.New(tlsutil.Config{CAFile: ca.CertFile, CertFile: mine.CertFile, KeyFile: mine.KeyFile})
	must.NoError(t, err)
	conn, err := net.Dial("tcp", ln.Addr().String())
	must.NoError(t, err)
	defer conn.Close()
	must.Error(t, tls.Client(conn, cw.OutgoingConfig("")).Handshake())
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	must.NoError(t, err)
	must.NoError(t, os.WriteFile(to, raw, 0o600))
}
