package fsm

import (
	"bytes"
	"io"

	"github.com/hashicorp/raft"
)

// memSink is an in-memory raft.SnapshotSink that is also the restore reader.
type memSink struct {
	bytes.Buffer
}

var _ raft.SnapshotSink = (*memSink)(nil)
var _ io.ReadCloser = (*memSink)(nil)

func (m *memSink) ID() string    { return "mem" }
func (m *memSink) Cancel() error { return nil }
func (m *memSink) Close() error  { return nil }
