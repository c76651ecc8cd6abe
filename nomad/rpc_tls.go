package nomad

import (
	"fmt"
	"net"

	"github.com/nomadfork/nomad/nomad/transport"
)

func newRPCTLS(config *Config) (*transport.TLS, error) {
	if config.TLS == nil {
		return nil, nil
	}
	return transport.LoadTLS(config.TLS, config.Region)
}

// dialer is how this server reaches other servers.
func (s *Server) dialer() transport.Dialer {
	return transport.Dialer{Key: s.clusterKey, TLS: s.rpcTLS}
}

// ReloadTLS reads the RPC port's certificate, key and CA again (SIGHUP). On error the
// material in use stays. A server without tls.rpc has nothing to reload.
func (s *Server) ReloadTLS() error {
	if s.rpcTLS == nil {
		return nil
	}
	return s.rpcTLS.Reload()
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
