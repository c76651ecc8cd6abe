package command

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/tlsutil"
	"github.com/nomadfork/nomad/tlsutil/tlstest"
	"github.com/shoenig/test/must"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	raw, err := os.ReadFile(path)
	must.NoError(t, err)
	block, _ := pem.Decode(raw)
	must.NotNil(t, block)
	c, err := x509.ParseCertificate(block.Bytes)
	must.NoError(t, err)
	return c
}

func TestTLSCommands_CreateTheFilesAnAgentLoads(t *testing.T) {
	t.Chdir(t.TempDir())
	ui := cli.NewMockUi()
	must.Eq(t, 0, (&TLSCACreateCommand{Meta: Meta{Ui: ui}}).Run(nil), must.Sprint(ui.ErrorWriter.String()))
	must.StrContains(t, ui.OutputWriter.String(), "nomad-agent-ca.pem")

	cases := []struct {
		name     string
		args     []string
		file     string
		dnsNames []string
		usage    []x509.ExtKeyUsage
		ip       bool
	}{
		{name: "server", args: []string{"-server"}, file: "global-server-nomad",
			dnsNames: []string{"server.global.nomad", "localhost"}, ip: true,
			usage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{name: "client in another region", args: []string{"-client", "-region", "eu", "-additional-dnsname", "node1.example.com"},
			file: "eu-client-nomad", dnsNames: []string{"client.eu.nomad", "localhost", "node1.example.com"}, ip: true,
			usage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{name: "cli", args: []string{"-cli"}, file: "global-cli-nomad",
			dnsNames: []string{"cli.global.nomad", "localhost"}, usage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ui := cli.NewMockUi()
			must.Eq(t, 0, (&TLSCertCreateCommand{Meta: Meta{Ui: ui}}).Run(tc.args), must.Sprint(ui.ErrorWriter.String()))
			c := readCert(t, tc.file+".pem")
			must.Eq(t, tc.dnsNames, c.DNSNames)
			must.Eq(t, tc.usage, c.ExtKeyUsage)
			if tc.ip {
				must.True(t, c.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)))
			}
			info, err := os.Stat(tc.file + "-key.pem")
			must.NoError(t, err)
			must.Eq(t, os.FileMode(0o600), info.Mode().Perm())
			// The agent's loader accepts the pair with the CA.
			_, err = tlsutil.New(tlsutil.Config{CAFile: "nomad-agent-ca.pem", CertFile: tc.file + ".pem", KeyFile: tc.file + "-key.pem"})
			must.NoError(t, err)
		})
	}

	t.Run("never overwrites", func(t *testing.T) {
		before, err := os.ReadFile("nomad-agent-ca-key.pem")
		must.NoError(t, err)
		ui := cli.NewMockUi()
		must.Eq(t, 1, (&TLSCACreateCommand{Meta: Meta{Ui: ui}}).Run(nil))
		must.StrContains(t, ui.ErrorWriter.String(), "nomad-agent-ca.pem already exists")
		after, err := os.ReadFile("nomad-agent-ca-key.pem")
		must.NoError(t, err)
		must.Eq(t, before, after)
	})
	t.Run("one role", func(t *testing.T) {
		ui := cli.NewMockUi()
		must.Eq(t, 1, (&TLSCertCreateCommand{Meta: Meta{Ui: ui}}).Run([]string{"-server", "-cli"}))
		must.StrContains(t, ui.ErrorWriter.String(), "Exactly one of -server, -client or -cli")
	})
	t.Run("missing CA", func(t *testing.T) {
		ui := cli.NewMockUi()
		must.Eq(t, 1, (&TLSCertCreateCommand{Meta: Meta{Ui: ui}}).Run([]string{"-client", "-ca", "nope.pem"}))
		must.StrContains(t, ui.ErrorWriter.String(), "nope.pem")
	})
}

func TestMeta_TLSFlagsOverrideTheEnvironment(t *testing.T) {
	t.Setenv("NOMAD_CACERT", "/env/ca.pem")
	t.Setenv("NOMAD_CLIENT_CERT", "/env/cli.pem")
	t.Setenv("NOMAD_CLIENT_KEY", "/env/cli-key.pem")
	t.Setenv("NOMAD_TLS_SERVER_NAME", "env.example")
	t.Setenv("NOMAD_SKIP_VERIFY", "true")

	cases := []struct {
		name string
		args []string
		want api.TLSConfig
	}{
		{name: "environment only", want: api.TLSConfig{CACert: "/env/ca.pem", ClientCert: "/env/cli.pem",
			ClientKey: "/env/cli-key.pem", TLSServerName: "env.example", Insecure: true}},
		{name: "flags win",
			args: []string{"-ca-cert", "/f/ca.pem", "-client-cert", "/f/c.pem", "-client-key", "/f/k.pem",
				"-tls-server-name", "server.global.nomad", "-tls-skip-verify=false"},
			want: api.TLSConfig{CACert: "/f/ca.pem", ClientCert: "/f/c.pem", ClientKey: "/f/k.pem",
				TLSServerName: "server.global.nomad"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &Meta{Ui: cli.NewMockUi()}
			fs := m.FlagSet("test")
			must.NoError(t, fs.Parse(tc.args))
			cfg := api.DefaultConfig()
			m.applyTLSFlags(cfg)
			must.Eq(t, tc.want.CACert, cfg.TLSConfig.CACert)
			must.Eq(t, tc.want.ClientCert, cfg.TLSConfig.ClientCert)
			must.Eq(t, tc.want.ClientKey, cfg.TLSConfig.ClientKey)
			must.Eq(t, tc.want.TLSServerName, cfg.TLSConfig.TLSServerName)
			must.Eq(t, tc.want.Insecure, cfg.TLSConfig.Insecure)
		})
	}
}

func TestSecurity_CLIPresentsItsClientCertificate(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	server := ca.Issue(t, "server", []string{"server.global.nomad"})
	cliCert := ca.Issue(t, "cli", []string{"cli.global.nomad"})
	w, err := tlsutil.New(tlsutil.Config{CAFile: ca.CertFile, CertFile: server.CertFile, KeyFile: server.KeyFile})
	must.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte("[]"))
	}))
	srv.TLS = w.IncomingConfig(true)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	cases := []struct {
		name string
		args []string
		ok   bool
	}{
		{name: "ca and client certificate", ok: true,
			args: []string{"-ca-cert", ca.CertFile, "-client-cert", cliCert.CertFile, "-client-key", cliCert.KeyFile}},
		{name: "no client certificate", args: []string{"-ca-cert", ca.CertFile}},
		{name: "unknown CA", args: []string{"-client-cert", cliCert.CertFile, "-client-key", cliCert.KeyFile}},
		{name: "wrong server name", args: []string{"-ca-cert", ca.CertFile, "-client-cert", cliCert.CertFile,
			"-client-key", cliCert.KeyFile, "-tls-server-name", "client.global.nomad"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &Meta{Ui: cli.NewMockUi()}
			fs := m.FlagSet("test")
			must.NoError(t, fs.Parse(append([]string{"-address", srv.URL}, tc.args...)))
			c, err := m.Client()
			must.NoError(t, err)
			_, _, err = c.Jobs().List(nil)
			if tc.ok {
				must.NoError(t, err)
				return
			}
			must.Error(t, err)
		})
	}
}
