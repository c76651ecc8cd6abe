// Package serverauth authenticates and encrypts the connections servers open to each other on
// the RPC port (Raft and server-to-server RPC) when no TLS is configured: both sides prove the
// cluster key (`server { encrypt = ... }`) in a Noise NNpsk0 handshake before the listener
// reads a single byte of Raft or RPC, and every byte after it travels in authenticated frames.
// Upstream leaves this port open without TLS; a stranger could append forged Raft entries or
// add a voter. It imports nothing of ours.
package serverauth
