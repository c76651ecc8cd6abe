package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// BenchmarkPublish publishes one-event batches into a default-sized buffer while every
// subscriber reads as fast as it can, resubscribing from its last index when it falls behind,
// as a client would. ns/op runs until every subscriber has read the last batch; events/s is
// the publish rate alone, which must not depend on the number of subscribers much.
func BenchmarkPublish(b *testing.B) { benchmarkPublish(b, false) }

// BenchmarkPublishEncoded is BenchmarkPublish with subscribers that read JSON lines, as the
// HTTP stream does: B/op over deliveries shows that subscribers share one encoding per batch.
func BenchmarkPublishEncoded(b *testing.B) { benchmarkPublish(b, true) }

func benchmarkPublish(b *testing.B, encoded bool) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			broker := newTestBroker(b, DefaultEventBufferSize)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			last := uint64(b.N)
			var delivered, resubscribes atomic.Int64
			var consumers sync.WaitGroup
			for range n {
				sub := subscribe(b, broker, allReq(0))
				consumers.Go(func() {
					consume(ctx, broker, sub, last, encoded, &delivered, &resubscribes)
				})
			}
			event := ev(structs.TopicJob, "default", "web")

			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				broker.Publish(batch(uint64(i+1), event))
			}
			published := time.Since(start)
			consumers.Wait()
			b.StopTimer()
			if ctx.Err() != nil {
				b.Fatal("subscribers did not catch up")
			}

			b.ReportMetric(float64(b.N)/published.Seconds(), "events/s")
			b.ReportMetric(float64(delivered.Load())/time.Since(start).Seconds(), "deliveries/s")
			b.ReportMetric(float64(resubscribes.Load())/float64(n), "resubscribes/subscriber")
		})
	}
}

func consume(ctx context.Context, broker *EventBroker, sub *Subscription, last uint64, encoded bool,
	delivered, resubscribes *atomic.Int64) {
	var received uint64
	for received < last {
		var events structs.Events
		var err error
		if encoded {
			var line []byte
			if line, err = sub.NextEncoded(ctx); err == nil {
				// The index is the first field; reading it back is the consumer's only work, as
				// writing the bytes out is the HTTP stream's.
				var index uint64
				index, err = lineIndex(line)
				events = structs.Events{Index: index, Events: oneEvent}
			}
		} else {
			events, err = sub.Next(ctx)
		}
		switch {
		case errors.Is(err, ErrSlowSubscriber):
			resubscribes.Add(1)
			if sub, err = broker.Subscribe(allReq(received)); err != nil {
				return
			}
			defer sub.Unsubscribe()
		case err != nil:
			return
		default:
			received = events.Index
			delivered.Add(int64(len(events.Events)))
		}
	}
}

var oneEvent = make([]structs.Event, 1)

// lineIndex reads N from a line that starts {"Index":N,
func lineIndex(line []byte) (uint64, error) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"Index":`))
	if !ok {
		return 0, errors.New("line does not start with the index")
	}
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, errors.New("no events after the index")
	}
	return strconv.ParseUint(string(rest[:end]), 10, 64)
}

// BenchmarkDeliveryLatency publishes at a steady 2,000 batches a second (a busy cluster) and
// reports how long each batch took from Publish to each subscriber's Next: the price of
// waking subscribers at most every WakeInterval instead of on every publish.
func BenchmarkDeliveryLatency(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			broker := newTestBroker(b, DefaultEventBufferSize)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			published := make([]atomic.Int64, b.N+1)
			latencies := make([][]time.Duration, n)
			var consumers sync.WaitGroup
			for i := range n {
				sub := subscribe(b, broker, allReq(0))
				consumers.Go(func() {
					for {
						events, err := sub.Next(ctx)
						if err != nil {
							return
						}
						at := published[events.Index].Load()
						latencies[i] = append(latencies[i], time.Duration(time.Now().UnixNano()-at))
						if events.Index == uint64(b.N) {
							return
						}
					}
				})
			}
			event := ev(structs.TopicJob, "default", "web")
			tick := time.NewTicker(500 * time.Microsecond)
			defer tick.Stop()
			b.ResetTimer()
			for i := 1; i <= b.N; i++ {
				<-tick.C
				published[i].Store(time.Now().UnixNano())
				broker.Publish(batch(uint64(i), event))
			}
			consumers.Wait()
			b.StopTimer()
			var all []time.Duration
			for _, l := range latencies {
				all = append(all, l...)
			}
			if len(all) == 0 {
				b.Fatal("nothing delivered")
			}
			slices.Sort(all)
			b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
		})
	}
}
