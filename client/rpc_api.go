package client

import (
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// maxAPICalls bounds the calls the agent's HTTP API has in flight on the session, below what
// a server accepts on one connection, so that blocking queries of API callers never crowd
// out the node's own heartbeat, allocation reads and updates.
const maxAPICalls = 8

// apiQueryMargin is what a blocking call waits beyond its MaxQueryTime for the answer.
const apiQueryMargin = rpcCallTimeout

// RPC sends one server RPC of the agent's HTTP API over the client's session, with the
// request as the caller made it: the servers resolve the caller's token (never the node's
// secret) exactly as for a request sent to a server's HTTP API. A blocking read waits up to
// its MaxQueryTime; a call waits for a slot (maxAPICalls) until the client shuts down.
func (r *RPCServers) RPC(method string, args, reply any) error {
	select {
	case r.apiSlots <- struct{}{}:
	case <-r.ctx.Done():
		return errors.New("client: shutting down")
	}
	defer func() { <-r.apiSlots }()
	timeout := rpcCallTimeout
	if q, ok := args.(interface{ QueryOpts() *structs.QueryOptions }); ok {
		opts := q.QueryOpts()
		wait := opts.MaxQueryTime
		if opts.MinQueryIndex > 0 && wait <= 0 {
			wait = 5 * time.Minute
		}
		timeout += wait + wait/16 + apiQueryMargin
	}
	return r.call(method, args, reply, timeout)
}

// Servers lists the addresses the client reaches the servers at, in the order it tries them.
func (r *RPCServers) Servers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.addrs...)
}

// SetServers replaces the servers the client reaches; the open session is dropped when its
// server is no longer in the list, so that the next call connects to one of the new ones.
func (r *RPCServers) SetServers(addrs []string) error {
	out, err := normalizeServerAddrs(addrs)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addrs = out
	r.next = 0
	if r.sess != nil && !containsAddr(out, r.sess.RemoteAddr().String()) {
		_ = r.sess.Close()
		r.sess = nil
	}
	return nil
}

// normalizeServerAddrs gives each address a port (DefaultRPCPort when it names none).
func normalizeServerAddrs(addrs []string) ([]string, error) {
	if len(addrs) == 0 {
		return nil, errors.New("client: no server addresses (client.servers or client.server_join.retry_join)")
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if a == "" {
			return nil, errors.New("client: an empty server address")
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			a = net.JoinHostPort(a, strconv.Itoa(DefaultRPCPort))
		}
		out = append(out, a)
	}
	return out, nil
}

// containsAddr reports whether remote (an IP:port) is one of addrs, resolving none of them:
// a name in the list never matches, which at worst reconnects once.
func containsAddr(addrs []string, remote string) bool {
	for _, a := range addrs {
		if a == remote {
			return true
		}
	}
	return false
}
