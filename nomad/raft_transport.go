package nomad

import "github.com/hashicorp/raft"

// unpipelinedTransport is Raft's network transport with AppendEntries pipelining turned off:
// Raft then replicates to each follower one request at a time, the way it already does after
// any failed append.
//
// Pipelining can stop replication to a follower for good (hashicorp/raft issue 612). When a
// follower refuses entries (Success=false: a full disk refuses them), the pipeline's decoder
// returns and nothing reads its answers any more, while the send loop may still pick its
// trigger over the decoder's exit and queue one more request; that send waits for room that
// never comes, and the pipeline's Close, deferred by the same loop, never runs. The
// follower's heartbeats go on from another goroutine, so it never times out and calls an
// election: it just never receives another entry. Jepsen seed 1796529218950934540 caught a
// server whose disk had filled stuck that way after it handed leadership over.
type unpipelinedTransport struct {
	*raft.NetworkTransport
}

// AppendEntriesPipeline tells Raft to use plain AppendEntries requests.
func (unpipelinedTransport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}
