package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/hashicorp/nomad/api"
)

// EventStreamCommand follows the event stream, resubscribing when it drops.
type EventStreamCommand struct {
	Meta

	// ctx replaces the interrupt-bound context when set (tests).
	ctx context.Context
	// backoff is the first delay before resubscribing; it doubles up to
	// maxStreamBackoff and resets once events flow again. Zero means
	// defaultStreamBackoff.
	backoff    time.Duration
	topicArgs  stringsFlag
	types      stringsFlag
	index      uint64
	purgedOnly bool
	asJSON     bool
}

const (
	defaultStreamBackoff = 500 * time.Millisecond
	maxStreamBackoff     = 10 * time.Second
)

func (c *EventStreamCommand) Help() string {
	return helpText(`
Usage: nomad event stream [options]

  Print the cluster's events as they happen, one line per event, until
  interrupted. If the stream drops (agent restart, slow consumer, token
  change), the command subscribes again from the last index it printed, so
  no event that is still buffered is missed or printed twice.

  Each line holds the time of the change (the changed object's own modify,
  submit or purge time; the time it was received when the object has none),
  the Raft index, topic, type,
  namespace and key, "purge=true" when a job was removed from the cluster
  rather than stopped, and the actor that caused the change.

  Subscribing to every topic needs a management token; the Job, Allocation,
  Evaluation, Deployment and Service topics need read-job in the namespace.
`, optionsHelp("Stream", c.options()))
}

func (c *EventStreamCommand) options() []option {
	return []option{
		valueOpt(&c.topicArgs, "-topic=<topic>[:<key>]", "Topic to subscribe to, optionally narrowed to one key such as a job ID\n(\"Job:web\"). Repeatable. Without it every topic is streamed."),
		flagOpt(&c.index, 0, "-index=<index>", "Start from this Raft index instead of the oldest buffered event."),
		valueOpt(&c.types, "-type=<type>", "Print only events of this type, e.g. JobDeregistered. Repeatable."),
		boolOpt(&c.purgedOnly, "-purged", "Print only job removals: Job events whose payload says the job was\npurged. Implies -topic=Job when no topic is given."),
		boolOpt(&c.asJSON, "-json", "Print each event as one line of JSON."),
	}
}

func (c *EventStreamCommand) Synopsis() string { return "Stream events from the cluster" }

func (c *EventStreamCommand) Run(args []string) int {
	fs := c.flagSetWith("event stream", c.options())
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	topics, err := parseTopics(c.topicArgs)
	if err != nil {
		return c.fail("%v", err)
	}
	if c.purgedOnly && len(topics) == 0 {
		topics = map[api.Topic][]string{api.TopicJob: {"*"}}
	}
	filter := eventFilter{types: map[string]bool{}, purgedOnly: c.purgedOnly}
	for _, t := range c.types {
		filter.types[t] = true
	}

	client, ok := c.client()
	if !ok {
		return 1
	}
	ctx := c.ctx
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	return c.follow(ctx, client, topics, c.index, filter, c.asJSON)
}

// follow subscribes and prints until ctx ends. lastSeen is the index of the
// last batch printed: a resubscription starts there, and any batch at or
// below it that the agent replays is skipped.
func (c *EventStreamCommand) follow(ctx context.Context, client *api.Client, topics map[api.Topic][]string,
	index uint64, filter eventFilter, asJSON bool) int {
	base := c.backoff
	if base == 0 {
		base = defaultStreamBackoff
	}
	delay := base
	var lastSeen uint64
	for {
		ch, err := openEventStream(ctx, client, topics, index)
		switch {
		case ctx.Err() != nil:
			return 0
		case err != nil && permanentStreamError(err):
			return c.fail("Error subscribing to events: %v", err)
		case err != nil:
			c.Ui.Warn(fmt.Sprintf("Event stream unavailable: %v; retrying from index %d", err, index))
		default:
			for frame := range ch {
				if frame.Gap != nil {
					// Said by the agent instead of skipping: print what is lost, go on from
					// the oldest index it still has.
					if lost := gapLost(frame.Gap, lastSeen); lost != "" {
						c.Ui.Warn(lost)
					}
					if frame.Gap.OldestIndex > index {
						index = frame.Gap.OldestIndex
					}
					continue
				}
				if frame.err != nil {
					if ctx.Err() == nil {
						c.Ui.Warn(fmt.Sprintf("Event stream interrupted: %v; resubscribing from index %d", frame.err, index))
					}
					break
				}
				if lastSeen != 0 && frame.Index <= lastSeen {
					continue
				}
				for _, e := range frame.Events {
					if filter.keep(e) {
						c.printEvent(e, asJSON)
					}
				}
				lastSeen, index = frame.Index, frame.Index
				delay = base
			}
		}
		if ctx.Err() != nil {
			return 0
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(delay):
		}
		delay = min(delay*2, maxStreamBackoff)
	}
}

// eventGap is the agent's gap frame: events after LastIndex and before OldestIndex are gone.
type eventGap struct {
	LastIndex   uint64
	OldestIndex uint64
	Reason      string
}

// streamFrame is one line of /v1/event/stream: a batch, a heartbeat, a gap, or an error.
type streamFrame struct {
	Index  uint64
	Events []api.Event
	Gap    *eventGap
	Error  string
	err    error
}

// gapLost describes the events a gap took from a reader that had printed through lastSeen; ""
// when it had them all.
func gapLost(g *eventGap, lastSeen uint64) string {
	from := max(g.LastIndex, lastSeen) + 1
	if g.OldestIndex <= from {
		return ""
	}
	return fmt.Sprintf("Events from index %d to %d are no longer held by the agent (%s) and were not printed; resuming at index %d",
		from, g.OldestIndex-1, g.Reason, g.OldestIndex)
}

// openEventStream reads the stream's NDJSON itself rather than through the official client,
// which takes the agent's gap frames for heartbeats.
func openEventStream(ctx context.Context, client *api.Client, topics map[api.Topic][]string, index uint64) (<-chan streamFrame, error) {
	params := url.Values{}
	params.Set("index", strconv.FormatUint(index, 10))
	for topic, keys := range topics {
		for _, k := range keys {
			params.Add("topic", string(topic)+":"+k)
		}
	}
	body, err := client.Raw().Response("/v1/event/stream?"+params.Encode(), (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, err
	}
	out := make(chan streamFrame, 16)
	go func() {
		defer close(out)
		defer body.Close()
		dec := json.NewDecoder(body)
		for ctx.Err() == nil {
			var f streamFrame
			if err := dec.Decode(&f); err != nil {
				f = streamFrame{err: err}
			} else if f.Error != "" {
				f.err = errors.New(f.Error)
			} else if f.Gap == nil && f.Index == 0 && len(f.Events) == 0 {
				continue // heartbeat
			}
			select {
			case out <- f:
			case <-ctx.Done():
				return
			}
			if f.err != nil {
				return
			}
		}
	}()
	return out, nil
}

// permanentStreamError tells refusals that retrying cannot fix (bad request,
// missing permission) from outages worth waiting out.
func permanentStreamError(err error) bool {
	var ue api.UnexpectedResponseError
	if !errors.As(err, &ue) {
		return false
	}
	if strings.HasPrefix(ue.Body(), "Permission denied") || strings.HasPrefix(ue.Body(), "ACL token") {
		return true
	}
	code := ue.StatusCode()
	return code >= 400 && code < 500 && code != 429
}

// parseTopics turns "Topic" and "Topic:Key" flags into the client's map.
func parseTopics(args []string) (map[api.Topic][]string, error) {
	topics := map[api.Topic][]string{}
	for _, a := range args {
		topic, key, hasKey := strings.Cut(a, ":")
		if topic == "" || strings.Contains(key, ":") {
			return nil, fmt.Errorf("Invalid -topic %q: expected <topic> or <topic>:<key>", a)
		}
		if !hasKey || key == "" {
			key = "*"
		}
		topics[api.Topic(topic)] = append(topics[api.Topic(topic)], key)
	}
	return topics, nil
}

type eventFilter struct {
	types      map[string]bool
	purgedOnly bool
}

func (f eventFilter) keep(e api.Event) bool {
	if len(f.types) > 0 && !f.types[e.Type] {
		return false
	}
	if f.purgedOnly && (e.Topic != api.TopicJob || !isPurge(e)) {
		return false
	}
	return true
}

// isPurge reports whether a Job event removed the job from state. Our agent
// sets Purge; released upstream agents set Deleted; both mean the same.
func isPurge(e api.Event) bool {
	return e.Payload["Purge"] == true || e.Payload["Deleted"] == true
}

// streamEvent is an event as printed with -json. The official client's
// Event has no Namespace field, so it is recovered from the payload object,
// which carries it for every namespaced topic.
type streamEvent struct {
	Topic      api.Topic
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    map[string]any
}

func eventNamespace(e api.Event) string {
	keys := slices.Sorted(maps.Keys(e.Payload))
	for _, k := range keys {
		if obj, ok := e.Payload[k].(map[string]any); ok {
			if ns, ok := obj["Namespace"].(string); ok && ns != "" {
				return ns
			}
		}
	}
	return ""
}

func (c *EventStreamCommand) printEvent(e api.Event, asJSON bool) {
	if asJSON {
		line, err := json.Marshal(streamEvent{
			Topic: e.Topic, Type: e.Type, Key: e.Key, Namespace: eventNamespace(e),
			FilterKeys: e.FilterKeys, Index: e.Index, Payload: e.Payload,
		})
		if err != nil {
			c.Ui.Warn(fmt.Sprintf("Error encoding event %d: %v", e.Index, err))
			return
		}
		c.Ui.Output(string(line))
		return
	}
	c.Ui.Output(formatEventLine(e, time.Now()))
}

// formatEventLine is the readable form: key=value pairs after the receive
// time, so lines can be grepped and split without knowing every topic.
func formatEventLine(e api.Event, received time.Time) string {
	at := received
	if t, ok := eventTime(e); ok {
		at = t
	}
	parts := []string{
		formatTime(at),
		"index=" + strconv.FormatUint(e.Index, 10),
		"topic=" + string(e.Topic),
		"type=" + e.Type,
	}
	if ns := eventNamespace(e); ns != "" {
		parts = append(parts, "namespace="+quoteIfSpaced(ns))
	}
	parts = append(parts, "key="+quoteIfSpaced(e.Key))
	if isPurge(e) {
		parts = append(parts, "purge=true")
	}
	if actor, ok := e.Payload["Actor"].(map[string]any); ok {
		name, _ := actor["Name"].(string)
		if name == "" {
			name, _ = actor["Type"].(string)
		}
		if name != "" {
			parts = append(parts, "actor="+quoteIfSpaced(name))
		}
		if id, _ := actor["AccessorID"].(string); id != "" {
			parts = append(parts, "accessor="+id)
		}
	}
	if forced, ok := e.Payload["ForcedBy"].(map[string]any); ok {
		name, _ := forced["Name"].(string)
		if name == "" {
			name, _ = forced["Type"].(string)
		}
		if name != "" {
			parts = append(parts, "forced_by="+quoteIfSpaced(name))
		}
		if id, _ := forced["AccessorID"].(string); id != "" {
			parts = append(parts, "forced_by_accessor="+id)
		}
	}
	return strings.Join(parts, " ")
}

// quoteIfSpaced quotes a value that is empty or holds a space, a quote or any control
// character: a newline in a job ID or a token name must not start a forged line of the feed
// that alerts on purges, nor an escape sequence rewrite the operator's terminal.
func quoteIfSpaced(s string) string {
	if s == "" || strings.ContainsAny(s, " \"") || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// eventTimeFields are the payload objects' fields that hold when they last changed, in the
// order they are looked for, with the unit of each: nanoseconds since the epoch, except a
// node's StatusUpdatedAt in seconds.
var eventTimeFields = []struct {
	name string
	unit time.Duration
}{
	{"ModifyTime", time.Nanosecond},
	{"PurgeTime", time.Nanosecond},
	{"SubmitTime", time.Nanosecond},
	{"StatusUpdatedAt", time.Second},
	{"CreateTime", time.Nanosecond},
}

// eventTime is when the event's change happened, read from its payload object: events carry
// no time of their own, and the receive time of a replayed (-index) or delayed event is not
// when it happened. ok is false for an object without such a field.
func eventTime(e api.Event) (time.Time, bool) {
	keys := slices.Sorted(maps.Keys(e.Payload))
	for _, k := range keys {
		obj, ok := e.Payload[k].(map[string]any)
		if !ok {
			continue
		}
		for _, f := range eventTimeFields {
			switch v := obj[f.name].(type) {
			case float64:
				if v > 0 {
					return time.Unix(0, int64(v)*int64(f.unit)).UTC(), true
				}
			case string:
				if t, err := time.Parse(time.RFC3339Nano, v); err == nil && !t.IsZero() && t.Year() > 1 {
					return t.UTC(), true
				}
			}
		}
	}
	return time.Time{}, false
}
