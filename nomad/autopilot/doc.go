// Package autopilot keeps the Raft configuration healthy on the leader: it judges each
// server's health (gossip status, last contact, term and trailing logs against the stored
// autopilot configuration) for the operator's health endpoint, removes servers gossip reports
// failed when cleanup_dead_servers allows it without costing the quorum, and promotes
// non-voters once they have been healthy for server_stabilization_time.
//
// It reaches the server through Backend and imports structs and nomad/gossip only, never the
// server package.
package autopilot
