// Package command holds the "nomad" command-line interface: one type per
// subcommand, wired together by Commands for main.go.
//
// The CLI is a client like any other. It reaches the agent only over HTTP
// through the official github.com/hashicorp/nomad/api client (Raw() for the
// endpoints this fork adds, such as the purge history), so everything it can
// do a third-party tool can do too.
//
// Imports: the official api client, hashicorp/cli and our jobspec parser.
// It must never import state, nomad or command/agent; `make check` enforces
// that direction.
package command
