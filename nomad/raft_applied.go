package nomad

import (
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/nomad/fsm"
	"github.com/nomadfork/nomad/raftutil"
)

// appliedFSM is the FSM Raft drives when the server keeps its log on disk: it applies through
// the FSM and then advances the record of the last applied index, which the next start
// compares the log against (a log that ends before it has lost acknowledged writes). It takes
// Raft's batches so the record costs one small write per batch, and configuration entries
// too, so even a server that has applied no command has a record.
type appliedFSM struct {
	*fsm.FSM
	record *raftutil.AppliedRecord
}

var (
	_ raft.BatchingFSM        = (*appliedFSM)(nil)
	_ raft.ConfigurationStore = (*appliedFSM)(nil)
)

func (a *appliedFSM) Apply(l *raft.Log) any {
	resp := a.FSM.Apply(l)
	a.record.Advance(l.Index)
	return resp
}

func (a *appliedFSM) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			out[i] = a.FSM.Apply(l)
		}
	}
	if len(logs) > 0 {
		a.record.Advance(logs[len(logs)-1].Index)
	}
	return out
}

func (a *appliedFSM) StoreConfiguration(index uint64, _ raft.Configuration) {
	a.record.Advance(index)
}
