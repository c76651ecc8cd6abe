package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/nomadfork/nomad/nomad/serverauth"
	"github.com/nomadfork/nomad/tlsutil"
)

// OpenTLS, as a connection's first byte, makes it TLS from its second byte on (upstream's RPCTLS byte).
// Inside the TLS session the first byte is the stream kind, as after the key handshake.
const OpenTLS byte = 0x04

// Role is what a connection proved itself to be. Raft and server RPC accept only
// RoleServer; a client-agent stream kind may accept RoleClient.
type Role uint8

const (
	RoleNone Role = iota
	// RoleServer: proved the cluster key, or presented a server certificate.
	RoleServer
	// RoleClient: presented a certificate naming client.<region>.nomad and not server.
	RoleClient
	// RoleOther: a certificate from the CA that names no role this server accepts (a CLI
	// certificate, or a server certificate of another region under verify_server_hostname).
	RoleOther
)

func (r Role) String() string {
	switch r {
	case RoleServer:
		return "server"
	case RoleClient:
		return "client"
	case RoleOther:
		return "other"
	default:
		return "none"
	}
}

// TLSConfig is the agent's tls block as far as the RPC port is concerned.
type TLSConfig struct {
	tlsutil.Config
	// VerifyServerHostname makes a server accept Raft and server RPC only from certificates
	// naming server.<region>.nomad, and check that name when it dials another server.
	VerifyServerHostname bool
	// RPCUpgradeMode also accepts the cluster-key handshake (never bare bytes), and dials
	// with the key when one is set, while a keyed cluster moves to TLS one server at a time.
	RPCUpgradeMode bool
}

// TLS is the RPC port's TLS: the reloadable certificates and the rules of the tls block.
type TLS struct {
	w              *tlsutil.Wrapper
	region         string
	verifyHostname bool
	upgrade        bool
}

// LoadTLS reads the certificate, key and CA of cfg; a bad file is an error that names it.
func LoadTLS(cfg *TLSConfig, region string) (*TLS, error) {
	if cfg.CAFile == "" {
		return nil, errors.New("tls.ca_file is required with tls.rpc: servers and clients verify each other's certificates with it")
	}
	w, err := tlsutil.New(cfg.Config)
	if err != nil {
		return nil, err
	}
	return &TLS{w: w, region: region, verifyHostname: cfg.VerifyServerHostname, upgrade: cfg.RPCUpgradeMode}, nil
}

// ClientTLS is how a client-only agent reaches the servers' RPC port when its tls block has
// rpc = true: it presents its own certificate and, with verify_server_hostname, accepts only a
// peer presenting server.<region>.nomad, so neither side talks to a stranger.
type ClientTLS struct{ t *TLS }

// NewClientTLS loads the client agent's certificate, key and CA; a bad file is an error that
// names it.
func NewClientTLS(cfg *TLSConfig, region string) (*ClientTLS, error) {
	t, err := LoadTLS(cfg, region)
	if err != nil {
		return nil, err
	}
	return &ClientTLS{t: t}, nil
}

// Dial opens a client agent's connection to the server at addr: TLS from the second byte on,
// then the client-agent stream kind inside the session.
func (c *ClientTLS) Dial(ctx context.Context, addr string) (net.Conn, error) {
	timeout := HandshakeTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	return c.t.dial(addr, KindClientAgent, timeout)
}

// Reload reads the certificate, key and CA again (SIGHUP); on error the ones in use stay.
func (c *ClientTLS) Reload() error { return c.t.w.Reload() }

// Reload reads the certificate, key and CA again (SIGHUP); on error the ones in use stay.
func (t *TLS) Reload() error { return t.w.Reload() }

// serverName is the name every server certificate of this region carries.
func (t *TLS) serverName() string { return "server." + t.region + ".nomad" }

// role reads the peer's role from its verified certificate's DNS SANs. A certificate naming
// neither role is taken for a server's only without verify_server_hostname (the operator's
// own naming; the start-up warning says what that allows) and never when it names the CLI.
func (t *TLS) role(cert *x509.Certificate) Role {
	switch {
	case tlsutil.HasDNSName(cert, t.serverName()):
		return RoleServer
	case tlsutil.HasDNSName(cert, "client."+t.region+".nomad"):
		return RoleClient
	case tlsutil.HasDNSName(cert, "cli."+t.region+".nomad"), t.verifyHostname:
		return RoleOther
	default:
		return RoleServer
	}
}

// acceptTLS runs the TLS handshake on conn (whose first byte, OpenTLS, is read), requiring a
// client certificate from the CA, then reads the stream kind. It returns the TLS connection,
// the kind and the peer's role; nothing the peer sends is read before its certificate checks.
func (l *Listener) acceptTLS(conn net.Conn, deadline time.Time) (net.Conn, byte, Role, error) {
	if l.tls == nil {
		return nil, 0, RoleNone, errors.New("TLS is not enabled on this server's RPC port (tls.rpc)")
	}
	tc := tls.Server(conn, l.tls.w.IncomingConfig(true))
	// The deadline covers the TLS handshake and the stream kind that follows it.
	_ = conn.SetDeadline(deadline)
	if err := tc.HandshakeContext(context.Background()); err != nil {
		return nil, 0, RoleNone, fmt.Errorf("TLS handshake: %w", err)
	}
	state := tc.ConnectionState()
	if len(state.VerifiedChains) == 0 || len(state.PeerCertificates) == 0 {
		return nil, 0, RoleNone, errors.New("TLS peer presented no verified certificate")
	}
	var kind [1]byte
	if _, err := tc.Read(kind[:]); err != nil {
		return nil, 0, RoleNone, fmt.Errorf("reading the stream kind: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	return tc, kind[0], l.tls.role(state.PeerCertificates[0]), nil
}

// acceptKey runs the cluster-key handshake on conn (whose first byte is read). With TLS on
// it is accepted only in rpc_upgrade_mode.
func (l *Listener) acceptKey(conn net.Conn, deadline time.Time) (net.Conn, byte, Role, error) {
	if l.key == nil {
		return nil, 0, RoleNone, errors.New("this server has no cluster key (server.encrypt)")
	}
	if l.tls != nil && !l.tls.upgrade {
		return nil, 0, RoleNone, errors.New("this server requires TLS on the RPC port (tls.rpc); the cluster key is accepted only with tls.rpc_upgrade_mode")
	}
	// Server takes a duration, where 0 means no bound: a deadline already past must still
	// be one.
	var timeout time.Duration
	if !deadline.IsZero() {
		timeout = max(time.Until(deadline), time.Nanosecond)
	}
	secure, kind, err := l.key.Server(conn, timeout)
	if err != nil {
		return nil, 0, RoleNone, err
	}
	return secure, kind, RoleServer, nil
}

// Dialer opens server-to-server streams: TLS when the RPC port has it, except in
// rpc_upgrade_mode with a key set, where servers not yet on TLS must still be reachable.
type Dialer struct {
	Key *serverauth.Key
	TLS *TLS
}

// Dial opens an authenticated stream of kind to the server at addr.
func (d Dialer) Dial(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	if d.TLS != nil && !(d.TLS.upgrade && d.Key != nil) {
		return d.TLS.dial(addr, kind, timeout)
	}
	return DialKey(d.Key, addr, kind, timeout)
}

// dial opens a TLS stream of kind to the server at addr, presenting this server's
// certificate; with verify_server_hostname the peer must present server.<region>.nomad.
func (t *TLS) dial(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	name := ""
	if t.verifyHostname {
		name = t.serverName()
	}
	_ = conn.SetDeadline(time.Now().Add(HandshakeTimeout))
	if _, err := conn.Write([]byte{OpenTLS}); err != nil {
		conn.Close()
		return nil, err
	}
	tc := tls.Client(conn, t.w.OutgoingConfig(name))
	if err := tc.Handshake(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
	}
	if _, err := tc.Write([]byte{kind}); err != nil {
		tc.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return tc, nil
}
