package state

import (
	"context"
	"testing"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestBlockingQuery_OneView: a query that reads rows and then the table index in separate
// calls sees one version of the store, so a write landing between the two calls can never
// give an answer whose index is newer than its rows (a client blocking past that index
// would never see the write).
func TestBlockingQuery_OneView(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))

	type answer struct {
		jobs  int
		index uint64
	}
	var answers []answer
	fn := func(ws memdb.WatchSet, store *StateStore) (uint64, error) {
		jobs, err := store.Jobs(ws, structs.DefaultNamespace, "")
		if err != nil {
			return 0, err
		}
		if len(answers) == 0 {
			// A write commits between the two reads of the first run.
			upsertJob(t, s, 11, mockJob("api"))
		}
		index := store.Index(tableJobs)
		answers = append(answers, answer{jobs: len(jobs), index: index})
		return index, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	index, err := BlockingQuery(ctx, func() *StateStore { return s }, 10, testTimeout, fn)
	must.NoError(t, err)
	must.Eq(t, uint64(11), index)
	must.Eq(t, []answer{{jobs: 1, index: 10}, {jobs: 2, index: 11}}, answers)
}
