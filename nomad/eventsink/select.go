package eventsink

import (
	"github.com/hashicorp/go-bexpr"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/structs"
)

// ValidateFilter refuses a sink filter that does not compile, with a 400 naming the field.
func ValidateFilter(expr string) error {
	if expr == "" {
		return nil
	}
	if _, err := bexpr.CreateEvaluator(expr, bexpr.WithMaxExpressions(paginator.MaxFilterParseSteps)); err != nil {
		return structs.BadRequest("Filter: %v", err)
	}
	return nil
}

// selector decides which events a sink delivers: its topics (as the event stream's topic
// filter reads them, across every namespace) and its bexpr filter over the event's JSON form.
type selector struct {
	topics map[structs.Topic][]string
	filter *paginator.Filter
}

func newSelector(sink *structs.EventSink) (*selector, error) {
	f, err := paginator.NewFilter(sink.Filter)
	if err != nil {
		return nil, err
	}
	return &selector{topics: sink.Topics, filter: f}, nil
}

func keysMatch(keys []string, e *structs.Event) bool {
	for _, k := range keys {
		if k == "*" || k == e.Key {
			return true
		}
		for _, fk := range e.FilterKeys {
			if k == fk {
				return true
			}
		}
	}
	return false
}

// selects reports whether the sink delivers e. An event the filter cannot be evaluated on
// (a selector naming a field this event does not have) is not selected, as it does not match.
func (s *selector) selects(e *structs.Event) bool {
	if !keysMatch(s.topics[structs.TopicAll], e) && !keysMatch(s.topics[e.Topic], e) {
		return false
	}
	ok, err := s.filter.Match(e)
	return err == nil && ok
}

// apply returns the events of batch the sink delivers.
func (s *selector) apply(batch structs.Events) []structs.Event {
	var out []structs.Event
	for i := range batch.Events {
		if s.selects(&batch.Events[i]) {
			out = append(out, batch.Events[i])
		}
	}
	return out
}

// purgeEvent is the event a purge record stands for, as the stream published it when the job
// was removed: a purge is JobDeregistered, a removal by the job GC JobBatchDeregistered, both
// with Purge, Deleted, the job as it was, and who removed it.
func purgeEvent(rec *structs.PurgeRecord) structs.Event {
	typ := structs.MessageTypes[structs.JobDeregisterRequestType].EventType
	if rec.Reason == structs.PurgeReasonGC {
		typ = structs.MessageTypes[structs.JobBatchDeregisterRequestType].EventType
	}
	return structs.Event{
		Topic: structs.TopicJob, Type: typ, Key: rec.JobID, Namespace: rec.Namespace, Index: rec.CreateIndex,
		Payload: &structs.JobEvent{Job: rec.Job, Purge: true, Deleted: true, Actor: rec.Actor, ForcedBy: rec.ForcedBy},
	}
}
