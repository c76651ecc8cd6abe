package state

import memdb "github.com/hashicorp/go-memdb"

// PointInTime returns a read-only view of the store as it is now, so that one decision (a
// scheduler run) reads the job, its allocations and the nodes at one index.
func (s *StateStore) PointInTime() *StateStore { return s.pointInTime() }

// WatchIndex adds to ws a watch that fires when table next changes, and returns the index at
// which it last changed. It reads one row, however large the table.
func (s *StateStore) WatchIndex(ws memdb.WatchSet, table string) uint64 {
	ch, raw, err := s.db.Txn(false).FirstWatch(tableIndex, "id", table)
	if err != nil {
		return 0
	}
	ws.Add(ch)
	if raw == nil {
		return 0
	}
	return raw.(*IndexEntry).Value
}
