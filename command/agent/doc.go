// Package agent is the `nomad agent` command: its configuration (config*.go), the Agent that
// runs a server with the HTTP API in front of it (agent.go, command.go), and the /v1 HTTP
// handlers, one file per resource (job_endpoint.go, eval_endpoint.go, …) registered from
// http.go. Handlers only parse requests and call the server's in-process RPC endpoints;
// errors become HTTP statuses through structs.ErrorCode.
//
// testing.go holds NewTestAgent, an in-process agent for tests in this and other packages.
//
// It may import structs, state (for blocking queries), nomad, jobspec and
// the official client types (github.com/hashicorp/nomad/api); the CLI in package command must
// not import it.
package agent
