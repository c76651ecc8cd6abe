// Package raftutil reads, verifies and repairs a server's Raft log (a raft-wal directory) on
// disk. The server runs its verification before Raft starts; the offline operator commands
// (`nomad operator raft logs|skip|truncate`) use the rest on a stopped agent's data dir.
//
// It may import structs (to check entries exactly as the FSM decodes them), raft and raft-wal,
// and nothing else of ours: the CLI imports it, and the CLI must not link the server.
package raftutil
