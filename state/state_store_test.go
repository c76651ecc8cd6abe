package state

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// testTimeout bounds every wait for another goroutine, so a broken wake-up fails the test
// instead of hanging it.
const testTimeout = 5 * time.Second

func TestStateStore_CommitHook(t *testing.T) {
	s := testStateStore(t)
	type seen struct {
		index   uint64
		msgType structs.MessageType
		meta    TxnMeta
		tables  []string
	}
	var got []seen
	s.SetCommitHook(func(txn *Txn, changes memdb.Changes) {
		var tables []string
		for _, c := range changes {
			tables = append(tables, c.Table)
		}
		got = append(got, seen{index: txn.Index, msgType: txn.MsgType, meta: txn.Meta, tables: tables})
	})

	// Aborted: the hook is not told.
	err := applyTxn(s, structs.JobRegisterRequestType, 10, nil, func(txn *Txn) error {
		must.NoError(t, s.UpsertJobTxn(txn, mockJob("web")))
		return errors.New("abort")
	})
	must.Error(t, err)
	must.SliceEmpty(t, got)

	mustCode(t, 404, applyPurge(s, 11, actorAlice, structs.DefaultNamespace, "web", "rec", nil))
	must.SliceEmpty(t, got)

	must.NoError(t, applyRegister(s, 12, actorAlice, mockJob("web"), nil))
	must.Len(t, 1, got)
	must.Eq(t, uint64(12), got[0].index)
	must.Eq(t, structs.JobRegisterRequestType, got[0].msgType)
	must.Eq(t, TxnMeta{Actor: actorAlice}, got[0].meta)
	must.SliceContainsSubset(t, got[0].tables, []string{tableIndex, tableJobs, tableJobVersion, tableJobSummary})

	must.NoError(t, applyPurge(s, 13, actorBob, structs.DefaultNamespace, "web", "rec", nil))
	must.Len(t, 2, got)
	must.Eq(t, TxnMeta{Purge: true, Actor: actorBob}, got[1].meta)
	must.SliceContains(t, got[1].tables, tablePurgeHistory)
}

func TestStateStore_Indexes(t *testing.T) {
	s := testStateStore(t)
	must.Eq(t, uint64(1), s.LatestIndex())
	upsertJob(t, s, 10, mockJob("web"))
	mustApply(t, s, structs.EvalUpdateRequestType, 12, nil, func(txn *Txn) error {
		return s.UpsertEvalsTxn(txn, []*structs.Evaluation{mockEval("e1", mockJob("web"), structs.EvalTriggerJobRegister)})
	})
	must.Eq(t, uint64(10), s.Index(tableJobs))
	must.Eq(t, uint64(12), s.Index(tableEvals))
	must.Eq(t, uint64(0), s.Index(tableACLTokens))
	must.Eq(t, uint64(12), s.LatestIndex())
}

func TestStateStore_DefaultConfig(t *testing.T) {
	must.Eq(t, 6, testStateStore(t).Config().JobTrackedVersions)
	must.Eq(t, 2, testStateStoreConfig(t, Config{JobTrackedVersions: 2}).Config().JobTrackedVersions)
}

type queryResult struct {
	index uint64
	err   error
}

func TestBlockingQuery(t *testing.T) {
	cases := []struct {
		name     string
		minIndex uint64
		maxWait  time.Duration
		// trigger runs once the query has read the store at least once; nil triggers nothing.
		trigger   func(t *testing.T, current *atomic.Pointer[StateStore])
		wantIndex uint64
		// wantCalls is the least number of times the query function must have run.
		wantCalls int
		// wantBlocked asserts the query waited at least maxWait.
		wantBlocked bool
	}{
		{name: "index past min returns at once", minIndex: 5, maxWait: time.Minute, wantIndex: 10, wantCalls: 1},
		{name: "min zero returns at once", minIndex: 0, maxWait: time.Minute, wantIndex: 10, wantCalls: 1},
		{
			name: "write wakes", minIndex: 10, maxWait: time.Minute,
			trigger: func(t *testing.T, current *atomic.Pointer[StateStore]) {
				upsertJob(t, current.Load(), 11, mockJob("api"))
			},
			wantIndex: 11, wantCalls: 2,
		},
		{
			name: "unrelated write does not answer", minIndex: 10, maxWait: 50 * time.Millisecond,
			trigger: func(t *testing.T, current *atomic.Pointer[StateStore]) {
				s := current.Load()
				mustApply(t, s, structs.EvalUpdateRequestType, 11, nil, func(txn *Txn) error {
					return s.UpsertEvalsTxn(txn, []*structs.Evaluation{mockEval("e1", mockJob("web"), structs.EvalTriggerJobRegister)})
				})
			},
			wantIndex: 10, wantCalls: 1, wantBlocked: true,
		},
		{name: "max wait returns old index", minIndex: 10, maxWait: 20 * time.Millisecond, wantIndex: 10, wantCalls: 1, wantBlocked: true},
		{
			name: "abandon wakes and reads the new store", minIndex: 10, maxWait: time.Minute,
			trigger: func(t *testing.T, current *atomic.Pointer[StateStore]) {
				old := current.Load()
				var buf bytes.Buffer
				must.NoError(t, old.Snapshot().Persist(&buf))
				restored, err := Restore(old.Config(), &buf)
				must.NoError(t, err)
				upsertJob(t, restored, 15, mockJob("api"))
				// As the FSM does on restore: install the new store, then abandon the old.
				current.Store(restored)
				old.Abandon()
			},
			wantIndex: 15, wantCalls: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			upsertJob(t, s, 10, mockJob("web"))
			var current atomic.Pointer[StateStore]
			current.Store(s)

			var calls atomic.Int32
			called := make(chan struct{}, 100)
			fn := func(ws memdb.WatchSet, store *StateStore) (uint64, error) {
				calls.Add(1)
				called <- struct{}{}
				if _, err := store.Jobs(ws, structs.DefaultNamespace, ""); err != nil {
					return 0, err
				}
				return store.Index(tableJobs), nil
			}

			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			start := time.Now()
			done := make(chan queryResult, 1)
			go func() {
				index, err := BlockingQuery(ctx, current.Load, tc.minIndex, tc.maxWait, fn)
				done <- queryResult{index, err}
			}()

			select {
			case <-called:
			case <-ctx.Done():
				t.Fatal("query function never ran")
			}
			if tc.trigger != nil {
				tc.trigger(t, &current)
			}
			var res queryResult
			select {
			case res = <-done:
			case <-ctx.Done():
				t.Fatal("blocking query did not return")
			}
			must.NoError(t, res.err)
			must.Eq(t, tc.wantIndex, res.index)
			must.GreaterEq(t, tc.wantCalls, int(calls.Load()))
			if tc.wantBlocked {
				must.GreaterEq(t, tc.maxWait, time.Since(start))
			}
		})
	}
}

func TestBlockingQuery_ErrorAndContext(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	getStore := func() *StateStore { return s }
	errQuery := errors.New("query failed")

	cases := []struct {
		name      string
		ctx       func() (context.Context, context.CancelFunc)
		minIndex  uint64
		fn        QueryFn
		wantIndex uint64
		wantErr   error
	}{
		{
			name:     "query error returned",
			ctx:      func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			minIndex: 10,
			fn: func(memdb.WatchSet, *StateStore) (uint64, error) {
				return 0, errQuery
			},
			wantErr: errQuery,
		},
		{
			name: "index zero reported as zero",
			ctx:  func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			fn: func(memdb.WatchSet, *StateStore) (uint64, error) {
				return 0, nil
			},
			wantIndex: 0,
		},
		{
			name:     "cancelled context answers with current index",
			minIndex: 10,
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			fn: func(ws memdb.WatchSet, store *StateStore) (uint64, error) {
				_, err := store.JobByID(ws, structs.DefaultNamespace, "web")
				return store.Index(tableJobs), err
			},
			wantIndex: 10,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			index, err := BlockingQuery(ctx, getStore, tc.minIndex, time.Minute, tc.fn)
			if tc.wantErr != nil {
				must.ErrorIs(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.wantIndex, index)
		})
	}
}
