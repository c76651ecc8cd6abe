package state

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// Config holds the settings the state store applies inside transactions.
type Config struct {
	// JobTrackedVersions is how many untagged versions of a job are kept.
	JobTrackedVersions int
}

// CommitHook receives every committed write transaction with the changes it made; the event
// publisher is one. It runs on the FSM goroutine and must not block.
type CommitHook func(txn *Txn, changes memdb.Changes)

// StateStore is the in-memory, MVCC state of the cluster. Only the FSM writes it.
type StateStore struct {
	config Config
	db     *memdb.MemDB
	// abandonCh is closed when the store is replaced by a snapshot restore, waking blocking
	// queries so they re-read the new store.
	abandonCh chan struct{}
	hook      atomic.Pointer[CommitHook]
}

// NewStateStore returns an empty store with the default namespace.
func NewStateStore(config Config) (*StateStore, error) {
	if config.JobTrackedVersions <= 0 {
		config.JobTrackedVersions = 6
	}
	db, err := memdb.NewMemDB(dbSchema())
	if err != nil {
		return nil, fmt.Errorf("state: building schema: %w", err)
	}
	s := &StateStore{config: config, db: db, abandonCh: make(chan struct{})}
	txn := s.WriteTxn(structs.NamespaceUpsertRequestType, 1, nil)
	defer txn.Abort()
	if err := s.upsertNamespaceTxn(txn, &structs.Namespace{Name: structs.DefaultNamespace, Description: "Default shared namespace"}); err != nil {
		return nil, err
	}
	txn.Txn.Commit() // the bootstrap row is not an event
	return s, nil
}

// SetCommitHook installs the function told about every committed transaction.
func (s *StateStore) SetCommitHook(hook CommitHook) { s.hook.Store(&hook) }

// Config returns the store's settings.
func (s *StateStore) Config() Config { return s.config }

// AbandonCh is closed when this store has been replaced by a restore.
func (s *StateStore) AbandonCh() <-chan struct{} { return s.abandonCh }

// Abandon marks the store replaced.
func (s *StateStore) Abandon() { close(s.abandonCh) }

// TxnMeta is what a write transaction knows about the request that caused it, so the events
// and records it produces can say why and by whom.
type TxnMeta struct {
	Purge bool
	Actor *structs.Actor
	// ForcedBy is who forced a GC whose Actor is the GC itself.
	ForcedBy *structs.Actor
}

// Txn is a write transaction that carries the Raft index and message type it applies, and the
// request metadata.
type Txn struct {
	*memdb.Txn
	store   *StateStore
	Index   uint64
	MsgType structs.MessageType
	Meta    TxnMeta
	// removedJobs are the jobs this transaction deleted whole: their version rows go with
	// them, and the job's own event tells of it, so they are not published as pruned.
	removedJobs map[jobKey]bool
}

type jobKey struct{ namespace, id string }

// WriteTxn opens a write transaction for one Raft entry. It tracks changes so the commit can
// derive events from them.
func (s *StateStore) WriteTxn(msgType structs.MessageType, index uint64, meta *TxnMeta) *Txn {
	t := &Txn{Txn: s.db.Txn(true), store: s, Index: index, MsgType: msgType}
	if meta != nil {
		t.Meta = *meta
	}
	t.TrackChanges()
	return t
}

// apply runs write in one transaction for the Raft entry at index and commits it when write
// succeeds; on an error nothing of it is kept.
func (s *StateStore) apply(msgType structs.MessageType, index uint64, meta *TxnMeta, write func(txn *Txn) error) error {
	txn := s.WriteTxn(msgType, index, meta)
	defer txn.Abort()
	if err := write(txn); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// Commit commits and hands the changes to the commit hook.
func (t *Txn) Commit() {
	changes := t.Txn.Changes()
	t.Txn.Commit()
	if hook := t.store.hook.Load(); hook != nil && *hook != nil {
		(*hook)(t, changes)
	}
}

// Snapshot returns a point-in-time read view.
func (s *StateStore) Snapshot() *StateSnapshot {
	return &StateSnapshot{store: s, txn: s.db.Txn(false)}
}

// pointInTime is a read-only view of the store as it is now. Its watch channels still fire
// on later writes to the live store, which shares its tree.
func (s *StateStore) pointInTime() *StateStore {
	return &StateStore{config: s.config, db: s.db.Snapshot(), abandonCh: s.abandonCh}
}

// StateSnapshot is a consistent read view of the whole store.
type StateSnapshot struct {
	store *StateStore
	txn   *memdb.Txn
}

// ReadTxn returns a read transaction over the live store.
func (s *StateStore) ReadTxn() *memdb.Txn { return s.db.Txn(false) }

// bumpIndex records that table changed at the transaction's index.
func (t *Txn) bumpIndex(table string) error {
	if err := t.Insert(tableIndex, &IndexEntry{Key: table, Value: t.Index}); err != nil {
		return fmt.Errorf("state: updating index of %s: %w", table, err)
	}
	return nil
}

// bumpIndexIf bumps table's index when changed: a write that touched no row leaves it as it
// was, so blocking queries on the table do not wake for nothing.
func (t *Txn) bumpIndexIf(changed bool, table string) error {
	if !changed {
		return nil
	}
	return t.bumpIndex(table)
}

// Index returns the index at which table last changed.
func (s *StateStore) Index(table string) uint64 {
	return indexOf(s.db.Txn(false), table)
}

func indexOf(txn *memdb.Txn, table string) uint64 {
	raw, err := txn.First(tableIndex, "id", table)
	if err != nil || raw == nil {
		return 0
	}
	return raw.(*IndexEntry).Value
}

// LatestIndex is the highest index of any table.
func (s *StateStore) LatestIndex() uint64 {
	txn := s.db.Txn(false)
	iter, err := txn.Get(tableIndex, "id")
	if err != nil {
		return 0
	}
	var max uint64
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if v := raw.(*IndexEntry).Value; v > max {
			max = v
		}
	}
	return max
}

// QueryFn runs a read against the store, adds what it read to ws, and returns the index that
// answers the query.
type QueryFn func(ws memdb.WatchSet, store *StateStore) (index uint64, err error)

// BlockingQuery runs fn until its index passes minIndex, the context ends or maxWait passes.
// getStore returns the current store, as a restore can replace it while waiting.
func BlockingQuery(ctx context.Context, getStore func() *StateStore, minIndex uint64, maxWait time.Duration, fn QueryFn) (uint64, error) {
	if maxWait <= 0 {
		maxWait = 5 * time.Minute
	}
	if maxWait > 10*time.Minute {
		maxWait = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	for {
		store := getStore()
		ws := memdb.NewWatchSet()
		ws.Add(store.AbandonCh())
		// One point-in-time view per run: fn reads its rows and the table index in separate
		// calls, and an index newer than the rows it answers with would make the caller block
		// past a write it never saw.
		index, err := fn(ws, store.pointInTime())
		if err != nil {
			return index, err
		}
		if minIndex == 0 || index > minIndex {
			return index, nil
		}
		if err := ws.WatchCtx(ctx); err != nil {
			// Timed out: answer with what we have, as upstream does.
			return index, nil
		}
	}
}
