// Package fsm applies the Raft log to the state store: each committed entry is decoded into
// the request type its message type names and applied in one write transaction, so a
// replayed log, a snapshot restore and every server reach the same state. It reads no clock
// and makes no ID: the leader fixed them before the entry reached Raft.
package fsm

import (
	"fmt"
	"io"
	"reflect"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// commandHandler applies one decoded Raft entry in one write transaction. It returns nil, a
// domain error or the write's answer (handleAnswer), which becomes the apply's response; it
// never reads clocks or makes IDs.
type commandHandler func(buf []byte, index uint64) any

// FSM applies the Raft log to the state store through a dispatch table.
type FSM struct {
	logger      hclog.Logger
	stateConfig state.Config
	store       atomic.Pointer[state.StateStore]
	commitHook  state.CommitHook
	// restoreHook is told the index of each restored snapshot: the event broker never saw
	// the transactions it covers (see stream.EventBroker.MarkUnpublishedThrough).
	restoreHook func(index uint64)
	handlers    map[structs.MessageType]commandHandler
}

// NewFSM returns an FSM over an empty store. commitHook may be nil.
func NewFSM(logger hclog.Logger, config state.Config, commitHook state.CommitHook) (*FSM, error) {
	store, err := state.NewStateStore(config)
	if err != nil {
		return nil, err
	}
	if commitHook != nil {
		store.SetCommitHook(commitHook)
	}
	f := &FSM{logger: logger, stateConfig: config, commitHook: commitHook, handlers: map[structs.MessageType]commandHandler{}}
	f.store.Store(store)
	f.registerCommands()
	return f, nil
}

// SetRestoreHook installs the function told the latest index of every restored snapshot. Call
// it before Raft starts.
func (f *FSM) SetRestoreHook(hook func(index uint64)) { f.restoreHook = hook }

// handle registers the handler of message type t, which it names once: the entry decodes
// into a fresh T (a corrupt entry panics, naming type and index), and write applies it in the
// entry's one write transaction, committed only when write succeeds. A write whose events
// credit an actor sets txn.Meta (read when the transaction commits).
func handle[T any](f *FSM, t structs.MessageType, write func(s *state.StateStore, txn *state.Txn, req *T) error) {
	f.registerCommand(t, func(buf []byte, index uint64) any {
		req := new(T)
		decode(buf, req, t, index)
		store := f.State()
		txn := store.WriteTxn(t, index, nil)
		defer txn.Abort()
		if err := write(store, txn, req); err != nil {
			return err
		}
		txn.Commit()
		return nil
	})
}

// handleApply registers the handler of message type t whose whole transaction is a state
// method (compound writes live in state/, where tests exercise the same code).
func handleApply[T any](f *FSM, t structs.MessageType, apply func(s *state.StateStore, index uint64, req *T) error) {
	f.registerCommand(t, func(buf []byte, index uint64) any {
		req := new(T)
		decode(buf, req, t, index)
		if err := apply(f.State(), index, req); err != nil {
			return err
		}
		return nil
	})
}

// handleAnswer registers the handler of message type t whose state method answers the caller
// (a check-and-set's outcome, the row written): the apply's response is that answer, or the
// domain error.
func handleAnswer[T, R any](f *FSM, t structs.MessageType, apply func(s *state.StateStore, index uint64, req *T) (R, error)) {
	f.registerCommand(t, func(buf []byte, index uint64) any {
		req := new(T)
		decode(buf, req, t, index)
		answer, err := apply(f.State(), index, req)
		if err != nil {
			return err
		}
		return answer
	})
}

func (f *FSM) registerCommand(t structs.MessageType, h commandHandler) {
	if _, dup := f.handlers[t]; dup {
		panic(fmt.Sprintf("fsm: handler for %s registered twice", t))
	}
	f.handlers[t] = timedCommand(t, h)
}

// State returns the current store; a restore replaces it.
func (f *FSM) State() *state.StateStore { return f.store.Load() }

// Apply implements raft.FSM.
func (f *FSM) Apply(log *raft.Log) any {
	if log.Type != raft.LogCommand || len(log.Data) == 0 {
		return nil
	}
	// The server verifies the whole log before Raft starts, so a failure here is damage that
	// happened while running, or an entry a leader should have refused. Skipping it would let
	// this server's state diverge from the others', so it stops the server instead.
	// An entry of a newer schema reaches an older server during a rolling upgrade, when a
	// newer leader replicates to it. Its encoding may mean something else to this binary, and
	// skipping it would diverge, so the server stops here; once upgraded it applies the entry.
	schema, err := structs.EntrySchemaVersion(log.Extensions)
	if err != nil {
		msg := fmt.Sprintf("fsm: refusing the log entry at index %d: %v", log.Index, err)
		f.logger.Error(msg)
		panic(msg)
	}
	entry, err := structs.ParseEntry(log.Data)
	if err != nil {
		panic(fmt.Sprintf("fsm: corrupt log entry at index %d: %v", log.Index, err))
	}
	h, ok := f.handlers[entry.Type]
	if !ok {
		// A type this binary does not know means a newer server wrote the log: applying past
		// it would diverge from the other servers.
		panic(fmt.Sprintf("fsm: no handler for message type %d at index %d", entry.Type, log.Index))
	}
	payload := entry.Payload
	if schema < structs.SchemaVersion {
		if payload, err = state.MigrateEntry(schema, entry.Type, payload); err != nil {
			panic(fmt.Sprintf("fsm: migrating the %s entry at index %d from schema version %d: %v", entry.Type, log.Index, schema, err))
		}
	}
	return h(payload, log.Index)
}

// decode reads an entry body or panics: an entry that does not decode is log corruption, and
// skipping it would let this server's state diverge. out must be the type structs.MessageTypes
// names for t, because that is what the leader checked the entry against before writing it.
func decode(buf []byte, out any, t structs.MessageType, index uint64) {
	if want := reflect.TypeOf(structs.MessageTypes[t].New()); reflect.TypeOf(out) != want {
		panic(fmt.Sprintf("fsm: handler for %s decodes into %T, but structs.MessageTypes says %s", t, out, want))
	}
	if err := structs.Decode(buf, out); err != nil {
		panic(fmt.Sprintf("fsm: corrupt %s entry at index %d: %v", t, index, err))
	}
}

// Snapshot implements raft.FSM.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{snap: f.State().Snapshot()}, nil
}

// Restore implements raft.FSM: it builds a new store from the snapshot and swaps it in.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	store, err := state.Restore(f.stateConfig, rc)
	if err != nil {
		return err
	}
	if f.commitHook != nil {
		store.SetCommitHook(f.commitHook)
	}
	old := f.store.Swap(store)
	old.Abandon()
	if f.restoreHook != nil {
		f.restoreHook(store.LatestIndex())
	}
	return nil
}

type fsmSnapshot struct {
	snap *state.StateSnapshot
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.snap.Persist(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}
