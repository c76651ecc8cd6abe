package agent

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/tlsutil/tlstest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func httpsAgent(t *testing.T, ca *tlstest.CA, verifyClient bool) *TestAgent {
	t.Helper()
	server := ca.Issue(t, "server", []string{"server.global.nomad"})
	return NewTestAgent(t, func(c *Config) {
		c.TLS = &TLSConfig{EnableHTTP: true, VerifyHTTPSClient: verifyClient,
			CAFile: ca.CertFile, CertFile: server.CertFile, KeyFile: server.KeyFile}
	})
}

func TestSecurity_HTTPSRequiresAClientCertificateFromTheCA(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	other := tlstest.NewCA(t, "other")
	ta := httpsAgent(t, ca, true)
	addr := "https://" + ta.Agent.HTTPAddr()
	cli := ca.Issue(t, "cli", []string{"cli.global.nomad"})
	foreign := other.Issue(t, "foreign", []string{"cli.global.nomad"})

	cases := []struct {
		name    string
		address string
		tls     *api.TLSConfig
		ok      bool
	}{
		{name: "client certificate from the CA", address: addr, ok: true,
			tls: &api.TLSConfig{CACert: ca.CertFile, ClientCert: cli.CertFile, ClientKey: cli.KeyFile}},
		{name: "no client certificate", address: addr, tls: &api.TLSConfig{CACert: ca.CertFile}},
		{name: "client certificate from another CA", address: addr,
			tls: &api.TLSConfig{CACert: ca.CertFile, ClientCert: foreign.CertFile, ClientKey: foreign.KeyFile}},
		{name: "plain HTTP", address: "http://" + ta.Agent.HTTPAddr()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := api.NewClient(&api.Config{Address: tc.address, TLSConfig: tc.tls})
			must.NoError(t, err)
			defer c.Close()
			_, _, err = c.Jobs().List(nil)
			if tc.ok {
				must.NoError(t, err)
				return
			}
			must.Error(t, err)
		})
	}
}

func TestAgent_HTTPSWithoutClientVerification(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	ta := httpsAgent(t, ca, false)
	c, err := api.NewClient(&api.Config{Address: "https://" + ta.Agent.HTTPAddr(), TLSConfig: &api.TLSConfig{CACert: ca.CertFile}})
	must.NoError(t, err)
	defer c.Close()
	// As a script would: calls work once a leader is reported.
	must.Wait(t, wait.InitialSuccess(wait.TestFunc(func() (bool, error) {
		leader, err := c.Status().Leader()
		return leader != "", err
	}), wait.Timeout(20*time.Second), wait.Gap(20*time.Millisecond)))
	_, _, err = c.Jobs().List(nil)
	must.NoError(t, err)

	// The server name is checked: the certificate names server.global.nomad and localhost.
	bad, err := api.NewClient(&api.Config{Address: "https://" + ta.Agent.HTTPAddr(),
		TLSConfig: &api.TLSConfig{CACert: ca.CertFile, TLSServerName: "example.com"}})
	must.NoError(t, err)
	defer bad.Close()
	_, _, err = bad.Jobs().List(nil)
	must.Error(t, err)
}

func TestSecurity_AgentRefusesToStartWithBadTLSFiles(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	other := tlstest.NewCA(t, "other")
	good := ca.Issue(t, "server", []string{"server.global.nomad"})
	expired := ca.Issue(t, "expired", []string{"server.global.nomad"}, tlstest.Expired)
	foreign := other.Issue(t, "foreign", []string{"server.global.nomad"})
	malformed := filepath.Join(t.TempDir(), "malformed.pem")
	must.NoError(t, os.WriteFile(malformed, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), 0o600))

	cases := []struct {
		name string
		tls  TLSConfig
		want []string
	}{
		{name: "malformed certificate (https)", tls: TLSConfig{EnableHTTP: true, CAFile: ca.CertFile, CertFile: malformed, KeyFile: good.KeyFile},
			want: []string{malformed, "malformed"}},
		{name: "wrong CA (rpc)", tls: TLSConfig{EnableRPC: true, CAFile: ca.CertFile, CertFile: foreign.CertFile, KeyFile: foreign.KeyFile},
			want: []string{foreign.CertFile, "not signed by the CA in tls.ca_file " + ca.CertFile}},
		{name: "expired certificate (rpc)", tls: TLSConfig{EnableRPC: true, CAFile: ca.CertFile, CertFile: expired.CertFile, KeyFile: expired.KeyFile},
			want: []string{expired.CertFile, "expired"}},
		{name: "malformed CA (rpc)", tls: TLSConfig{EnableRPC: true, CAFile: malformed, CertFile: good.CertFile, KeyFile: good.KeyFile},
			want: []string{"tls.ca_file " + malformed}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DevConfig()
			cfg.BindAddr = "127.0.0.1"
			cfg.Ports.HTTP = freePort(t)
			cfg.Ports.RPC = freePort(t)
			cfg.Client.Enabled = false
			// bootstrap_expect 2 puts Raft on the RPC port, so tls.rpc applies.
			cfg.Server.BootstrapExpect = 2
			cfg.TLS = &tc.tls
			must.NoError(t, cfg.Validate())
			a, err := NewAgent(cfg, hclog.NewNullLogger())
			if a != nil {
				a.Shutdown()
			}
			must.Error(t, err)
			for _, w := range tc.want {
				must.StrContains(t, err.Error(), w)
			}
		})
	}
}

func TestAgent_ServerConfigCarriesRPCTLS(t *testing.T) {
	cfg := DevConfig()
	cfg.TLS = &TLSConfig{EnableRPC: true, CAFile: "/ca", CertFile: "/c", KeyFile: "/k",
		VerifyServerHostname: true, RPCUpgradeMode: true, TLSMinVersion: "tls13"}
	sc := serverConfig(cfg, hclog.NewNullLogger())
	must.NotNil(t, sc.TLS)
	must.Eq(t, "/ca", sc.TLS.CAFile)
	must.Eq(t, "/c", sc.TLS.CertFile)
	must.Eq(t, "/k", sc.TLS.KeyFile)
	must.Eq(t, "tls13", sc.TLS.MinVersion)
	must.True(t, sc.TLS.VerifyServerHostname)
	must.True(t, sc.TLS.RPCUpgradeMode)

	cfg.TLS = &TLSConfig{EnableHTTP: true}
	must.Nil(t, serverConfig(cfg, hclog.NewNullLogger()).TLS)
}

// TestAgent_SIGHUPReloadsTheHTTPSCertificate runs `nomad agent` with HTTPS, replaces the
// certificate files and sends SIGHUP: new connections get the new certificate.
func TestAgent_SIGHUPReloadsTheHTTPSCertificate(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	first := ca.Issue(t, "server", []string{"server.global.nomad"})
	port := freePort(t)
	cfgPath := filepath.Join(t.TempDir(), "tls.hcl")
	must.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`
log_level = "WARN"
ports {
  http = %d
}
tls {
  http      = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
}
`, port, ca.CertFile, first.CertFile, first.KeyFile)), 0o600))

	ui := cli.NewMockUi()
	signals := make(chan os.Signal, 1)
	done := make(chan int, 1)
	go func() { done <- run([]string{"-dev", "-config", cfgPath}, ui, signals) }()
	t.Cleanup(func() {
		signals <- syscall.SIGTERM
		<-done
	})

	served := func() (string, error) {
		conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return "", err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
	}
	must.Wait(t, wait.InitialSuccess(wait.TestFunc(func() (bool, error) {
		cn, err := served()
		return cn == "server", err
	}), wait.Timeout(20*time.Second), wait.Gap(20*time.Millisecond)))

	second := ca.Issue(t, "renewed", []string{"server.global.nomad"})
	for from, to := range map[string]string{second.CertFile: first.CertFile, second.KeyFile: first.KeyFile} {
		raw, err := os.ReadFile(from)
		must.NoError(t, err)
		must.NoError(t, os.WriteFile(to, raw, 0o600))
	}
	signals <- syscall.SIGHUP
	must.Wait(t, wait.InitialSuccess(wait.TestFunc(func() (bool, error) {
		cn, err := served()
		return cn == "renewed", err
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))

	// The agent still answers over HTTPS after the reload.
	c, err := api.NewClient(&api.Config{Address: fmt.Sprintf("https://127.0.0.1:%d", port), TLSConfig: &api.TLSConfig{CACert: ca.CertFile}})
	must.NoError(t, err)
	defer c.Close()
	// As a script would: calls work once a leader is reported.
	must.Wait(t, wait.InitialSuccess(wait.TestFunc(func() (bool, error) {
		leader, err := c.Status().Leader()
		return leader != "", err
	}), wait.Timeout(20*time.Second), wait.Gap(20*time.Millisecond)))
	_, _, err = c.Jobs().List(nil)
	must.NoError(t, err)

	// PUT /v1/agent/reload does what SIGHUP does.
	third := ca.Issue(t, "reloaded", []string{"server.global.nomad"})
	for from, to := range map[string]string{third.CertFile: first.CertFile, third.KeyFile: first.KeyFile} {
		raw, err := os.ReadFile(from)
		must.NoError(t, err)
		must.NoError(t, os.WriteFile(to, raw, 0o600))
	}
	must.NoError(t, c.Agent().Reload(nil, nil))
	cn, err := served()
	must.NoError(t, err)
	must.Eq(t, "reloaded", cn)

	// A key file that no longer parses: a 500 naming the failure, and the certificate in
	// use stays.
	must.NoError(t, os.WriteFile(first.KeyFile, []byte("not a key"), 0o600))
	err = c.Agent().Reload(nil, nil)
	must.ErrorContains(t, err, "500")
	must.ErrorContains(t, err, "reloading TLS certificates failed")
	cn, err = served()
	must.NoError(t, err)
	must.Eq(t, "reloaded", cn)
}

// TestSecurity_ClientOnlyAgentOverMutualTLS: with tls.rpc on both sides a client-only agent
// reaches the server over TLS with its client certificate, registers, and a SIGHUP reload of
// a client-only agent (which has no server) works instead of crashing it.
func TestSecurity_ClientOnlyAgentOverMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	serverFiles := ca.Issue(t, "server", []string{"server.global.nomad"})
	clientFiles := ca.Issue(t, "client", []string{"client.global.nomad"})
	ta, rpcAddr := newRPCServerAgent(t, func(c *Config) {
		c.TLS = &TLSConfig{EnableRPC: true, VerifyServerHostname: true,
			CAFile: ca.CertFile, CertFile: serverFiles.CertFile, KeyFile: serverFiles.KeyFile}
	})
	ca2 := newClientOnlyAgentWith(t, func(c *Config) {
		c.TLS = &TLSConfig{EnableRPC: true, VerifyServerHostname: true,
			CAFile: ca.CertFile, CertFile: clientFiles.CertFile, KeyFile: clientFiles.KeyFile}
	}, rpcAddr)
	node, _, err := ta.Client("").Nodes().Info(ca2.Client().NodeID(), nil)
	must.NoError(t, err)
	must.Eq(t, "ready", node.Status)
	must.NoError(t, ca2.ReloadTLS())
}

// TestSecurity_ClientOnlyAgentRefusesBadTLSFiles: a client-only agent with tls.rpc and a
// missing key file does not start, and the error names the file.
func TestSecurity_ClientOnlyAgentRefusesBadTLSFiles(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster")
	clientFiles := ca.Issue(t, "client", []string{"client.global.nomad"})
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.BindAddr = "127.0.0.1"
	cfg.Ports = &Ports{HTTP: freePort(t), RPC: freePort(t), Serf: freePort(t)}
	cfg.Server.Enabled = false
	cfg.Client.Enabled = true
	cfg.Client.Servers = []string{"127.0.0.1:1"}
	missing := filepath.Join(t.TempDir(), "missing-key.pem")
	cfg.TLS = &TLSConfig{EnableRPC: true, CAFile: ca.CertFile, CertFile: clientFiles.CertFile, KeyFile: missing}
	cfg.NormalizeAddrs()
	_, err := NewAgent(cfg, hclog.NewNullLogger())
	must.ErrorContains(t, err, "missing-key.pem")
}
