// Package agent is the `nomad agent` command: its configuration (config*.go), the Agent that
// runs a server with the HTTP API in front of it (agent.go, command.go), and the /v1 HTTP
// handlers, one file per resource (job_endpoint.go, eval_endpoint.go, …) registered from
// http.go. Handlers only parse requests and call the server's in-process RPC endpoints;
// errors become HTTP statuses through structs.ErrorCode.
//
// agent_harness.go starts an in-process agent for tests without linking the testing package;
// tests reach it through agenttest (other packages) or harness_test.go (this package).
//
// It may import structs, state (for blocking queries), nomad, jobspec, internal/connlimit and
// the official client types (github.com/hashicorp/nomad/api); the CLI in package command must
// not import it.
package agent
