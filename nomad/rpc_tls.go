package nomad

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

// connTLS opens a connection that is TLS from its second byte on (upstream's RPCTLS byte).
// Inside the TLS session the first byte is the stream kind, as after the key handshake.
const connTLS byte = 0x04

// peerRole is what a connection proved itself to be. Raft and server RPC accept only
// roleServer; a client-agent stream kind may accept roleClient.
type peerRole uint8

const (
	roleNone peerRole = iota
	// roleServer: proved the cluster key, or presented a server certificate.
	roleServer
	// roleClient: presented a certificate naming client.<region>.nomad and not server.
	roleClient
	// roleOther: a certificate from the CA that names no role this server accepts (a CLI
	// certificate, or a server certificate of another region under verify_server_hostname).
	roleOther
)

func (r peerRole) String() string {
	switch r {
	case roleServer:
		return "server"
	case roleClient:
		return "client"
	case roleOther:
		return "other"
	default:
		return "none"
	}
}

// rpcTLS is the RPC port's TLS: the reloadable certificates and the rules of the tls block.
type rpcTLS struct {
	w              *tlsutil.Wrapper
	region         string
	verifyHostname bool
	upgrade        bool
}

func newRPCTLS(config *Config) (*rpcTLS, error) {
	if config.TLS == nil {
		return nil, nil
	}
	return loadRPCTLS(config.TLS, config.Region)
}

func loadRPCTLS(cfg *RPCTLSConfig, region string) (*rpcTLS, error) {
	if cfg.CAFile == "" {
		return nil, errors.New("tls.ca_file is required with tls.rpc: servers and clients verify each other's certificates with it")
	}
	w, err := tlsutil.New(cfg.Config)
	if err != nil {
		return nil, err
	}
	return &rpcTLS{w: w, region: region, verifyHostname: cfg.VerifyServerHostname, upgrade: cfg.RPCUpgradeMode}, nil
}

// ClientTLS is how a client-only agent reaches the servers' RPC port when its tls block has
// rpc = true: it presents its own certificate and, with verify_server_hostname, accepts only a
// peer presenting server.<region>.nomad, so neither side talks to a stranger.
type ClientTLS struct{ t *rpcTLS }

// NewClientTLS loads the client agent's certificate, key and CA; a bad file is an error that
// names it.
func NewClientTLS(cfg *RPCTLSConfig, region string) (*ClientTLS, error) {
	t, err := loadRPCTLS(cfg, region)
	if err != nil {
		return nil, err
	}
	return &ClientTLS{t: t}, nil
}

// Dial opens a client agent's connection to the server at addr: TLS from the second byte on,
// then the client-agent stream kind inside the session.
func (c *ClientTLS) Dial(ctx context.Context, addr string) (net.Conn, error) {
	timeout := handshakeTimeout
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	return c.t.dial(addr, connClientAgent, timeout)
}

// Reload reads the certificate, key and CA again (SIGHUP); on error the ones in use stay.
func (c *ClientTLS) Reload() error { return c.t.w.Reload() }

// serverName is the name every server certificate of this region carries.
func (t *rpcTLS) serverName() string { return "server." + t.region + ".nomad" }

// role reads the peer's role from its verified certificate's DNS SANs. A certificate naming
// neither role is taken for a server's only without verify_server_hostname (the operator's
// own naming; the start-up warning says what that allows) and never when it names the CLI.
func (t *rpcTLS) role(cert *x509.Certificate) peerRole {
	switch {
	case tlsutil.HasDNSName(cert, t.serverName()):
		return roleServer
	case tlsutil.HasDNSName(cert, "client."+t.region+".nomad"):
		return roleClient
	case tlsutil.HasDNSName(cert, "cli."+t.region+".nomad"), t.verifyHostname:
		return roleOther
	default:
		return roleServer
	}
}

// acceptTLS runs the TLS handshake on conn (whose first byte, connTLS, is read), requiring a
// client certificate from the CA, then reads the stream kind. It returns the TLS connection,
// the kind and the peer's role; nothing the peer sends is read before its certificate checks.
func (l *rpcListener) acceptTLS(conn net.Conn, deadline time.Time) (net.Conn, byte, peerRole, error) {
	if l.tls == nil {
		return nil, 0, roleNone, errors.New("TLS is not enabled on this server's RPC port (tls.rpc)")
	}
	tc := tls.Server(conn, l.tls.w.IncomingConfig(true))
	// The deadline covers the TLS handshake and the stream kind that follows it.
	_ = conn.SetDeadline(deadline)
	if err := tc.HandshakeContext(context.Background()); err != nil {
		return nil, 0, roleNone, fmt.Errorf("TLS handshake: %w", err)
	}
	state := tc.ConnectionState()
	if len(state.VerifiedChains) == 0 || len(state.PeerCertificates) == 0 {
		return nil, 0, roleNone, errors.New("TLS peer presented no verified certificate")
	}
	var kind [1]byte
	if _, err := tc.Read(kind[:]); err != nil {
		return nil, 0, roleNone, fmt.Errorf("reading the stream kind: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	return tc, kind[0], l.tls.role(state.PeerCertificates[0]), nil
}

// acceptKey runs the cluster-key handshake on conn (whose first byte is read). With TLS on
// it is accepted only in rpc_upgrade_mode.
func (l *rpcListener) acceptKey(conn net.Conn, deadline time.Time) (net.Conn, byte, peerRole, error) {
	if l.key == nil {
		return nil, 0, roleNone, errors.New("this server has no cluster key (server.encrypt)")
	}
	if l.tls != nil && !l.tls.upgrade {
		return nil, 0, roleNone, errors.New("this server requires TLS on the RPC port (tls.rpc); the cluster key is accepted only with tls.rpc_upgrade_mode")
	}
	// Server takes a duration, where 0 means no bound: a deadline already past must still
	// be one.
	var timeout time.Duration
	if !deadline.IsZero() {
		timeout = max(time.Until(deadline), time.Nanosecond)
	}
	secure, kind, err := l.key.Server(conn, timeout)
	if err != nil {
		return nil, 0, roleNone, err
	}
	return secure, kind, roleServer, nil
}

// serverDialer opens server-to-server streams: TLS when the RPC port has it, except in
// rpc_upgrade_mode with a key set, where servers not yet on TLS must still be reachable.
type serverDialer struct {
	key *serverauth.Key
	tls *rpcTLS
}

func (d serverDialer) dial(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	if d.tls != nil && !(d.tls.upgrade && d.key != nil) {
		return d.tls.dial(addr, kind, timeout)
	}
	return dialServer(d.key, addr, kind, timeout)
}

// dial opens a TLS stream of kind to the server at addr, presenting this server's
// certificate; with verify_server_hostname the peer must present server.<region>.nomad.
func (t *rpcTLS) dial(addr string, kind byte, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	name := ""
	if t.verifyHostname {
		name = t.serverName()
	}
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if _, err := conn.Write([]byte{connTLS}); err != nil {
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

// dialer is how this server reaches other servers.
func (s *Server) dialer() serverDialer { return serverDialer{key: s.clusterKey, tls: s.rpcTLS} }

// ReloadTLS reads the RPC port's certificate, key and CA again (SIGHUP). On error the
// material in use stays. A server without tls.rpc has nothing to reload.
func (s *Server) ReloadTLS() error {
	if s.rpcTLS == nil {
		return nil
	}
	return s.rpcTLS.w.Reload()
}

// transportWarnings are logged at start: what protects the RPC port when it is reachable from
// other hosts, and what the operator should change.
func transportWarnings(config *Config) []string {
	if config.RaftBindAddr == "" {
		return nil
	}
	if config.TLS != nil {
		var out []string
		if !config.TLS.VerifyServerHostname {
			out = append(out, "tls.verify_server_hostname is off: any certificate signed by the CA that does not name "+
				"client.<region>.nomad or cli.<region>.nomad is accepted as a server's for Raft and server RPC; turn it on")
		}
		if config.TLS.RPCUpgradeMode {
			out = append(out, "tls.rpc_upgrade_mode is on: the RPC port also accepts the cluster key (server.encrypt), "+
				"and a server with a key dials with it; remove rpc_upgrade_mode once every server runs with TLS")
		}
		return out
	}
	host, _, err := net.SplitHostPort(config.RaftBindAddr)
	if err != nil {
		host = config.RaftBindAddr
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	if config.EncryptKey == "" {
		return []string{fmt.Sprintf("the RPC port %s is reachable from other hosts and TLS is off (tls.rpc): "+
			"without a cluster key it refuses every connection; set tls { rpc = true } with certificates to run servers across hosts", config.RaftBindAddr)}
	}
	return []string{fmt.Sprintf("the RPC port %s is reachable from other hosts and TLS is off (tls.rpc): "+
		"Raft and server RPC are authenticated by the shared cluster key (server.encrypt) only, so anyone holding the key "+
		"is a server and no server can be told from another; enable tls { rpc = true, verify_server_hostname = true } "+
		"with a certificate per server", config.RaftBindAddr)}
}
