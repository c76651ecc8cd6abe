package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// defaultEventHeartbeat is how often an idle event stream sends `{}` so clients and proxies
// know it is alive.
const defaultEventHeartbeat = 30 * time.Second

// parseTopics reads repeated topic=Topic[:Key] parameters; no parameter means every topic.
func parseTopics(values []string) (map[structs.Topic][]string, error) {
	if len(values) > structs.EventStreamMaxTopicKeys {
		return nil, structs.BadRequest("Invalid topic query: %d topic parameters, the limit is %d", len(values), structs.EventStreamMaxTopicKeys)
	}
	topics := map[structs.Topic][]string{}
	for _, v := range values {
		parts := strings.Split(v, ":")
		if len(parts) > 2 || parts[0] == "" {
			return nil, structs.BadRequest("Invalid topic query: Invalid key value pair %q: expected Topic or Topic:Key", v)
		}
		key := "*"
		if len(parts) == 2 {
			if parts[1] == "" {
				return nil, structs.BadRequest("Invalid topic query: Invalid key value pair %q: empty key", v)
			}
			key = parts[1]
		}
		t := structs.Topic(parts[0])
		topics[t] = append(topics[t], key)
	}
	if len(topics) == 0 {
		topics[structs.TopicAll] = []string{"*"}
	}
	return topics, nil
}

// eventStream streams NDJSON: `{}` at once and on every heartbeat, then one line
// {"Index":N,"Events":[…]} per batch that passes the filter. Errors before the first byte are
// ordinary HTTP errors (a denial is 403); a subscription the server closes ends the stream
// with a final {"Error": "..."} line.
func (s *HTTPServer) eventStream(w http.ResponseWriter, r *http.Request) (any, error) {
	q := queryOptions(r)
	topics, err := parseTopics(r.URL.Query()["topic"])
	if err != nil {
		return nil, err
	}
	sub, expires, err := s.subscribeEvents(&structs.EventStreamRequest{
		Topics: topics, Namespace: q.Namespace, Index: q.MinQueryIndex, AuthToken: q.AuthToken,
	})
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()

	ctx := r.Context()
	if expires != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, *expires)
		defer cancel()
	}
	heartbeat := s.agent.config.eventHeartbeat
	if heartbeat <= 0 {
		heartbeat = defaultEventHeartbeat
	}

	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Encoding")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	// Batches arrive already encoded and shared with every subscriber of the same view; the
	// stream only writes them.
	write := func(line []byte) bool {
		if _, err := w.Write(line); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	sendError := func(msg string) {
		line, _ := json.Marshal(map[string]string{"Error": msg})
		write(append(line, '\n'))
	}
	// A gap is said in its own frame before what follows it, never skipped in silence.
	sendGap := func() bool {
		gap := sub.TakeGap()
		if gap == nil {
			return true
		}
		line, _ := json.Marshal(gapFrame{Gap: gap})
		return write(append(line, '\n'))
	}
	if !write(heartbeatLine) {
		return nil, nil
	}
	for {
		waitCtx, cancel := context.WithTimeout(ctx, heartbeat)
		line, err := sub.NextEncoded(waitCtx)
		cancel()
		if !sendGap() {
			return nil, nil
		}
		switch {
		case err == nil:
			if !write(line) {
				return nil, nil
			}
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			if !write(heartbeatLine) {
				return nil, nil
			}
		case ctx.Err() != nil && r.Context().Err() == nil:
			// The token expired while streaming.
			sendError(structs.ErrTokenExpired.Error() + ": subscription closed by server, client should resubscribe")
			return nil, nil
		case r.Context().Err() != nil:
			return nil, nil
		default:
			sendError(err.Error())
			return nil, nil
		}
	}
}

// gapFrame is the line that announces an EventGap; Index 0 without events reads as a heartbeat
// to clients that do not know it.
type gapFrame struct {
	Index uint64
	Gap   *structs.EventGap
}

// heartbeatLine is what an idle stream sends, one shared slice for every stream.
var heartbeatLine = []byte("{}\n")

// eventSubscription is a subscription as the stream writer reads it: the server's own on a
// server agent, one relayed over the client's connection on a client-only agent.
type eventSubscription interface {
	NextEncoded(ctx context.Context) ([]byte, error)
	TakeGap() *structs.EventGap
	Unsubscribe()
}

// subscribeEvents opens a subscription with the caller's request, which the servers
// authorise; expires is when the caller's token expires (nil: never).
func (s *HTTPServer) subscribeEvents(req *structs.EventStreamRequest) (eventSubscription, *time.Time, error) {
	if s.srv != nil {
		sub, expires, err := s.srv.Endpoints.Event.SubscribeUntil(req)
		if err != nil {
			return nil, nil, err
		}
		return sub, expires, nil
	}
	es, expires, err := s.agent.rpcServers.EventStream(req)
	if err != nil {
		return nil, nil, err
	}
	return es, expires, nil
}
