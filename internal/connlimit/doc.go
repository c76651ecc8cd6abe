// Package connlimit counts the connections a listener holds open per client IP address and
// refuses one past the cap, so that one address (a stranger holding silent or slow
// connections) cannot use up what every other client needs: file descriptors, goroutines,
// handshake slots. The HTTP API (limits.http_max_conns_per_client) and the RPC port
// (limits.rpc_max_conns_per_client) use it. There is deliberately no global cap: one a single
// address could fill would bring back the starvation this package exists to prevent. It
// imports nothing of ours.
package connlimit
