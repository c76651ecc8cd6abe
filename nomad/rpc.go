package nomad

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// queryFn answers a read from store, adding what it read to ws, and returns the index the
// answer reflects.
type queryFn func(ws memdb.WatchSet, store *state.StateStore) (uint64, error)

// pagedList answers a paged list read through blocking (blockingRPC or blockingRPCZero): the
// rows read returns, paged by paginator.Page into *out and meta.NextToken, at index(store).
func pagedList[T, S any](blocking func(*structs.QueryOptions, *structs.QueryMeta, queryFn) error,
	opts *structs.QueryOptions, meta *structs.QueryMeta, out *[]S,
	rows func(ws memdb.WatchSet, store *state.StateStore) ([]T, error),
	order paginator.Order[T], visible func(T) bool, stub func(T) (S, error),
	index func(store *state.StateStore) uint64) error {
	return blocking(opts, meta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := rows(ws, store)
		if err != nil {
			return 0, err
		}
		*out, meta.NextToken, err = paginator.Page(all, *opts, order, visible, stub)
		if err != nil {
			return 0, err
		}
		return index(store), nil
	})
}

// blockingRPC answers a read, waiting for its index to pass MinQueryIndex when asked to.
// The index it reports is at least 1: most upstream reads floor it there, so that a caller
// can block on it.
func (s *Server) blockingRPC(opts *structs.QueryOptions, meta *structs.QueryMeta, fn queryFn) error {
	err := s.blockingRPCZero(opts, meta, fn)
	if meta.Index == 0 {
		meta.Index = 1
	}
	return err
}

// blockingRPCZero is blockingRPC for the reads where upstream reports index 0 while the
// tables behind the answer were never written (allocation lists, a job's allocations and
// evaluations); the official client's tests assert that 0.
func (s *Server) blockingRPCZero(opts *structs.QueryOptions, meta *structs.QueryMeta, fn queryFn) error {
	index, err := state.BlockingQuery(s.shutdownCtx, s.State, opts.MinQueryIndex, opts.MaxQueryTime,
		func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			return fn(ws, store)
		})
	meta.Index = index
	s.setQueryMeta(meta)
	return err
}

// maxIndex is the highest table index among tables, the index of an answer built from them.
func maxIndex(store *state.StateStore, tables ...string) uint64 {
	var max uint64
	for _, t := range tables {
		if i := store.Index(t); i > max {
			max = i
		}
	}
	return max
}

// now is the leader's clock, read only in endpoints before a Raft apply, never in the FSM.
func now() time.Time { return time.Now() }

// blockingGet serves a blocking read of one object: get finds it (nil when there is none)
// and set puts it on the reply. The read waits on the object's own modify index once it
// exists (modified; nil for objects that wait on their table), and on tables' otherwise.
func blockingGet[T any](c *rpcCall, opts *structs.QueryOptions, meta *structs.QueryMeta,
	get func(memdb.WatchSet, *state.StateStore) (*T, error), set func(*T), modified func(*T) uint64, tables ...string) error {
	return c.srv.blockingRPC(opts, meta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		obj, err := get(ws, store)
		if err != nil {
			return 0, err
		}
		set(obj)
		if obj != nil && modified != nil {
			return modified(obj), nil
		}
		return maxIndex(store, tables...), nil
	})
}

// views is each object as view shows it, in order: an empty list, never nil, when there are
// none, so that the answer is [] rather than null.
func views[T, V any](objs []*T, view func(*T) V) []V {
	out := make([]V, 0, len(objs))
	for _, obj := range objs {
		out = append(out, view(obj))
	}
	return out
}
