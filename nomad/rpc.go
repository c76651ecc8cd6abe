package nomad

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// queryFn answers a read from store, adding what it read to ws, and returns the index the
// answer reflects.
type queryFn func(ws memdb.WatchSet, store *state.StateStore) (uint64, error)

// blockingRPC answers a read, waiting for its index to pass MinQueryIndex when asked to.
func (s *Server) blockingRPC(opts *structs.QueryOptions, meta *structs.QueryMeta, fn queryFn) error {
	s.waitLeaderReady()
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
