// Package nomad is the server: Raft and the FSM that applies its log to the state store, the
// RPC endpoints the HTTP agent calls in-process and other servers and clients call over the
// wire, cluster membership, and the duties of the leader.
//
// Where each concern lives:
//   - Server lifetime: server.go builds a server and owns every goroutine it starts;
//     Shutdown stops them. Tests start in-memory servers through the server harness.
//   - Raft and the FSM: raft_logstore.go, raft_applied.go, raft_recovery.go and
//     raft_snapshots.go keep the log on disk, verify it before Raft reads it and recover it;
//     the fsm package decodes each entry and hands it to one state/ method per message
//     type (one file per concern registers them); events.go reacts to every committed transaction (event
//     publishing, the evaluation broker, ACL cache and subscription re-checks, acl_recheck.go).
//   - RPC: the transport package (nomad/transport) owns the RPC port: it authenticates
//     connections (cluster key or TLS), caps them per address and splits one port between
//     Raft, server RPC and client agents; rpc_tls.go loads its TLS from the server's config;
//     rpc_server.go dispatches calls; rpc_client_conn.go and
//     client_session.go carry the client agents' connections and streams; agent_stream.go
//     carries a server agent's debug routes (host data, profiles, monitor) to another server;
//     rpc.go serves blocking reads.
//   - Endpoints: endpoint.go declares the endpoint table and its read and write pipelines
//     (forward, resolve the token, authorise, validate, apply); *_endpoint.go hold the
//     services, with helpers beside them (job_*.go, node_*.go, variables_*.go, ...).
//   - ACLs: acl.go resolves a token into a compiled ACL and the caller's identity;
//     workload_identity.go and node_identity_endpoint.go sign and check identities.
//   - Membership: serf.go (gossip finds servers, it never makes a voter), cluster.go (the
//     authenticated handshake that forms and grows the Raft cluster), the autopilot package
//     (health, dead-server cleanup, promotion) through autopilot_backend.go.
//   - Leader duties: leader_duties.go declares them as a table of duties and chores, and the
//     leader package runs them for each leadership term and stops them when it ends: the
//     evaluation broker's feeder (the evalfeed package), the scheduling workers (the worker
//     package, reached through worker_backend.go and scheduler_input.go), node heartbeats
//     (heartbeat.go), garbage collection (core_gc.go), periodic launches, the deployment
//     watcher, the drainer and the plan applier (their own packages below this one).
//   - Disk: disk_space.go refuses writes that a full data_dir could not make durable.
//
// It imports structs, state, acl, scheduler, raftutil and the shared helpers (tlsutil,
// internal/) besides its own subpackages; never command/ or client/.
//
// What must stay true:
//   - Only the FSM writes the state store, and it stays deterministic: the leader fixes every
//     ID and time a write carries before the entry reaches Raft.
//   - A call is authorised by the server that serves it, after any forward: a follower
//     never decides for the leader.
//   - Secrets never reach logs or error messages.
package nomad
