package nomad

import (
	"bytes"
	"io"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/nomad/fsm"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// The server's own tests apply entries to a bare FSM where what they check is how the server
// encodes an entry (raft_apply_test.go) or what a write does to state (security_jobs_test.go).

func testFSM(t *testing.T) *fsm.FSM {
	t.Helper()
	f, err := fsm.NewFSM(hclog.NewNullLogger(), state.Config{JobTrackedVersions: 6}, nil)
	must.NoError(t, err)
	return f
}

func applyEntry(t *testing.T, f *fsm.FSM, index uint64, mt structs.MessageType, req any) any {
	t.Helper()
	buf, err := structs.Encode(mt, req)
	must.NoError(t, err)
	return f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: buf})
}

// memSink is an in-memory raft.SnapshotSink that is also the restore reader.
type memSink struct {
	bytes.Buffer
}

var _ raft.SnapshotSink = (*memSink)(nil)
var _ io.ReadCloser = (*memSink)(nil)

func (m *memSink) ID() string    { return "mem" }
func (m *memSink) Cancel() error { return nil }
func (m *memSink) Close() error  { return nil }
