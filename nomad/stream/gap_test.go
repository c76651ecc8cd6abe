package stream

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestSubscription_GapIsSaid: whenever batches a subscriber was owed are gone, TakeGap says so
// once, naming the last index it had and the oldest still available; a start that loses
// nothing says nothing.
func TestSubscription_GapIsSaid(t *testing.T) {
	t.Run("start older than the buffer", func(t *testing.T) {
		b := newTestBroker(t, 2)
		publishIndexes(b, 1, 2, 3, 4)
		sub := subscribe(t, b, allReq(1))
		mustNextIndexes(t, sub, 3)
		must.Eq(t, &structs.EventGap{LastIndex: 1, OldestIndex: 3, Reason: structs.EventGapIndexNotRetained}, sub.TakeGap())
		must.Nil(t, sub.TakeGap(), must.Sprint("said once"))
		mustNextIndexes(t, sub, 4)
		must.Nil(t, sub.TakeGap())
	})
	t.Run("start within the buffer", func(t *testing.T) {
		b := newTestBroker(t, 2)
		publishIndexes(b, 1, 2, 3, 4)
		sub := subscribe(t, b, allReq(2))
		mustNextIndexes(t, sub, 3)
		must.Nil(t, sub.TakeGap())
	})
	t.Run("index 0 asks for what is retained", func(t *testing.T) {
		b := newTestBroker(t, 2)
		publishIndexes(b, 1, 2, 3, 4)
		sub := subscribe(t, b, allReq(0))
		mustNextIndexes(t, sub, 3)
		must.Nil(t, sub.TakeGap())
	})
	t.Run("overtaken before the first read", func(t *testing.T) {
		b := newTestBroker(t, 2)
		sub := subscribe(t, b, allReq(1))
		publishIndexes(b, 1, 2, 3, 4, 5)
		mustNextIndexes(t, sub, 4)
		must.Eq(t, &structs.EventGap{LastIndex: 1, OldestIndex: 4, Reason: structs.EventGapIndexNotRetained}, sub.TakeGap())
	})
	t.Run("fell behind after reading", func(t *testing.T) {
		b := newTestBroker(t, 2)
		sub := subscribe(t, b, allReq(0))
		publishIndexes(b, 1)
		mustNextIndexes(t, sub, 1)
		publishIndexes(b, 2, 3, 4)
		_, err := next(t, sub)
		must.ErrorIs(t, err, ErrSlowSubscriber)
		must.Eq(t, &structs.EventGap{LastIndex: 1, OldestIndex: 3, Reason: structs.EventGapFellBehind}, sub.TakeGap())
	})
}
