// Package structs holds the types every layer shares: the stored objects (jobs, allocations,
// nodes, evaluations, deployments, ACL objects, variables, ...), the request and response of
// each RPC, the Raft log's message types and encoding, and the typed errors.
//
// Where each concern lives:
//   - Objects and their rules: one file per object (job.go, alloc.go, node.go, ...), with
//     validation (job_validate.go, placement_validate.go), defaults and diffs (job_diff.go)
//     beside them.
//   - Requests and responses: *_requests.go and request.go (the query and write options
//     every RPC carries).
//   - The Raft log: message_types.go numbers the entries and says which request each
//     carries; encoding.go frames, checksums and encodes them (msgpack).
//   - Errors: errors.go holds the sentinels and the coded errors (BadRequest, NotFound,
//     PermissionDenied, ...) whose kind crosses RPC, so errors.Is works on either side and
//     the HTTP layer maps kinds to status codes in one place.
//   - Events: event.go, the payloads of the event stream.
//
// It imports nothing else from this module, so every package may import it.
//
// What must stay true:
//   - Message type values and encoded field names are persisted in logs and snapshots:
//     never renumber or rename, only append.
//   - Fields that must never leave the servers (private key material, introduction tokens)
//     are kept out of JSON (json:"-").
package structs
