package command

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"

	"github.com/nomadfork/nomad/tlsutil"
)

// The tls commands write a CA and agent certificates to the current directory, with
// upstream's file names, so an operator can follow upstream's guides. They talk to no agent.

const tlsHelp = `
Usage: nomad tls <subcommand> [options]

  Create a CA and the certificates agents and the CLI present for mutual TLS
  (the agent's tls block). Files are written to the current directory.

    nomad tls ca create
    nomad tls cert create -server
    nomad tls cert create -client
    nomad tls cert create -cli
`

const tlsCAHelp = `
Usage: nomad tls ca <subcommand> [options]

  Create a certificate authority for the cluster.
`

const tlsCertHelp = `
Usage: nomad tls cert <subcommand> [options]

  Create certificates signed by the cluster CA.
`

// TLSCACreateCommand is `nomad tls ca create`.
type TLSCACreateCommand struct {
	Meta
}

func (c *TLSCACreateCommand) Synopsis() string { return "Create a certificate authority for TLS" }

func (c *TLSCACreateCommand) Help() string {
	return localHelp(`
Usage: nomad tls ca create [options]

  Create a self-signed CA (ECDSA P-256) and write <domain>-agent-ca.pem and
  <domain>-agent-ca-key.pem to the current directory. Keep the key file
  secret: whoever holds it can mint server certificates.

Options:

  -common-name=<name>
    Common name of the CA. Default "Nomad Agent CA <serial>".

  -days=<n>
    Days the CA is valid from now. Default 1825 (five years).

  -domain=<domain>
    Domain of the cluster; names the files. Default "nomad".
`)
}

func (c *TLSCACreateCommand) Run(args []string) int {
	var days int
	var domain, cn string
	flags := c.FlagSet("tls ca create")
	flags.IntVar(&days, "days", 1825, "")
	flags.StringVar(&domain, "domain", "nomad", "")
	flags.StringVar(&cn, "common-name", "", "")
	if _, code, ok := c.parseArgs(flags, args); !ok {
		return code
	}
	if days <= 0 {
		return c.fail("-days must be positive, got %d", days)
	}
	if domain == "" {
		return c.fail("-domain must not be empty")
	}
	certFile, keyFile := domain+"-agent-ca.pem", domain+"-agent-ca-key.pem"
	if err := refuseExisting(certFile, keyFile); err != nil {
		return c.fail("%v", err)
	}
	now := time.Now()
	certPEM, keyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{CommonName: cn,
		NotBefore: now.Add(-time.Minute), NotAfter: now.AddDate(0, 0, days)})
	if err != nil {
		return c.fail("Error creating the CA: %v", err)
	}
	if err := writeNew(certFile, certPEM, 0o644); err != nil {
		return c.fail("%v", err)
	}
	if err := writeNew(keyFile, keyPEM, 0o600); err != nil {
		return c.fail("%v", err)
	}
	c.Ui.Output("==> CA certificate saved to: " + certFile)
	c.Ui.Output("==> CA certificate key saved to: " + keyFile)
	return 0
}

// TLSCertCreateCommand is `nomad tls cert create`.
type TLSCertCreateCommand struct {
	Meta
}

func (c *TLSCertCreateCommand) Synopsis() string { return "Create a server, client or CLI certificate" }

func (c *TLSCertCreateCommand) Help() string {
	return localHelp(`
Usage: nomad tls cert create -server|-client|-cli [options]

  Create a certificate (ECDSA P-256) signed by the CA and write
  <region>-<role>-<domain>.pem and <region>-<role>-<domain>-key.pem to the
  current directory. The certificate names <role>.<region>.<domain> and
  localhost (and 127.0.0.1 for servers and clients): agents with
  verify_server_hostname accept Raft and server RPC only from
  server.<region>.nomad certificates.

  A server certificate grants the power to be a server: to read every secret
  in the state, ACL tokens included. Give it only to server hosts.

Options:

  -server | -client | -cli
    The role of the certificate. Exactly one is required.

  -ca=<path>
    The CA certificate. Default <domain>-agent-ca.pem.

  -key=<path>
    The CA key. Default <domain>-agent-ca-key.pem.

  -region=<region>
    Region of the agent. Default "global".

  -domain=<domain>
    Domain of the cluster. Default "nomad".

  -days=<n>
    Days the certificate is valid from now. Default 365.

  -additional-dnsname=<name>
    Another DNS name for the certificate; may be repeated.

  -additional-ipaddress=<ip>
    Another IP address for the certificate; may be repeated.
`, "region")
}

func (c *TLSCertCreateCommand) Run(args []string) int {
	var server, client, cliRole bool
	var caFile, keyFile, region, domain string
	var days int
	var dnsNames, ips stringSlice
	flags := c.FlagSet("tls cert create")
	flags.BoolVar(&server, "server", false, "")
	flags.BoolVar(&client, "client", false, "")
	flags.BoolVar(&cliRole, "cli", false, "")
	flags.StringVar(&caFile, "ca", "", "")
	flags.StringVar(&keyFile, "key", "", "")
	flags.StringVar(&domain, "domain", "nomad", "")
	flags.IntVar(&days, "days", 365, "")
	flags.Var(&dnsNames, "additional-dnsname", "")
	flags.Var(&ips, "additional-ipaddress", "")
	if _, code, ok := c.parseArgs(flags, args); !ok {
		return code
	}
	// -region is the general flag (the region to forward to); here it names the
	// certificate's region.
	region = c.region
	if region == "" {
		region = "global"
	}
	role := ""
	count := 0
	for name, set := range map[string]bool{"server": server, "client": client, "cli": cliRole} {
		if set {
			role = name
			count++
		}
	}
	if count != 1 {
		return c.fail("Exactly one of -server, -client or -cli is required")
	}
	if days <= 0 {
		return c.fail("-days must be positive, got %d", days)
	}
	if domain == "" {
		return c.fail("-domain must not be empty")
	}
	if caFile == "" {
		caFile = domain + "-agent-ca.pem"
	}
	if keyFile == "" {
		keyFile = domain + "-agent-ca-key.pem"
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return c.fail("Error reading the CA certificate: %v", err)
	}
	caKeyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return c.fail("Error reading the CA key: %v", err)
	}

	name := role + "." + region + "." + domain
	opts := tlsutil.CertOptions{
		CommonName: name,
		DNSNames:   append([]string{name, "localhost"}, dnsNames...),
		CACertPEM:  caPEM,
		CAKeyPEM:   caKeyPEM,
		NotBefore:  time.Now().Add(-time.Minute),
	}
	opts.NotAfter = opts.NotBefore.AddDate(0, 0, days)
	if role == "cli" {
		opts.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		// Agents both accept and open connections with the same certificate.
		opts.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		opts.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			return c.fail("-additional-ipaddress: %q is not an IP address", s)
		}
		opts.IPAddresses = append(opts.IPAddresses, ip)
	}

	base := region + "-" + role + "-" + domain
	certFile, certKeyFile := base+".pem", base+"-key.pem"
	if err := refuseExisting(certFile, certKeyFile); err != nil {
		return c.fail("%v", err)
	}
	certPEM, keyPEM, err := tlsutil.GenerateCert(opts)
	if err != nil {
		return c.fail("Error creating the certificate: %v", err)
	}
	if role == "server" {
		c.Ui.Warn("==> WARNING: a server certificate grants the power to become a server and read all\n" +
			"    state, ACL tokens included. Give it only to server hosts; keep it as safe as the CA key.")
	}
	c.Ui.Output("==> Using CA file " + caFile + " and CA key " + keyFile)
	if err := writeNew(certFile, certPEM, 0o644); err != nil {
		return c.fail("%v", err)
	}
	if err := writeNew(certKeyFile, keyPEM, 0o600); err != nil {
		return c.fail("%v", err)
	}
	c.Ui.Output("==> Certificate saved to: " + certFile)
	c.Ui.Output("==> Certificate key saved to: " + certKeyFile)
	return 0
}

// refuseExisting fails when any of files exists: a CA or key is never overwritten.
func refuseExisting(files ...string) error {
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("%s already exists; remove it or run in another directory", f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeNew creates path with mode, failing if it appeared meanwhile.
func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// stringSlice is a repeatable string flag.
type stringSlice []string

func (s *stringSlice) String() string     { return strings.Join(*s, ",") }
func (s *stringSlice) Set(v string) error { *s = append(*s, v); return nil }
