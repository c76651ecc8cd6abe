// Package tlsutil loads and reloads the agent's TLS material (tls { ca_file, cert_file,
// key_file }) and builds the tls.Config of each side of a connection from it; it also issues
// the certificates `nomad tls ca create` and `nomad tls cert create` write, which tests reuse.
//
// It imports nothing of ours, so the server (nomad/), the agent (command/agent) and the CLI
// (command/) may all use it.
package tlsutil
