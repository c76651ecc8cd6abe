package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

const (
	// monitorBuffer is how many log lines wait for a slow caller before new ones are
	// dropped: a monitor never slows the agent's logging down.
	monitorBuffer = 512
	// monitorHeartbeat is how often a quiet monitor sends an empty frame.
	monitorHeartbeat = 10 * time.Second
)

// agentMonitor streams this agent's log lines at log_level (default info) and above, as
// upstream's route does: JSON stream frames whose Data is the formatted line ("{}" is a
// heartbeat), or the lines alone with plain=true; log_json=true formats them as JSON. With
// node_id naming another node, the lines come from that node's client agent; with server_id
// naming another server, from that server's agent (which checks the token again). agent read
// is needed.
func (s *HTTPServer) agentMonitor(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentRead}); err != nil {
		return nil, err
	}
	if sent, out, err := s.toNamedAgent(w, r); sent {
		return out, err
	}
	return s.monitorLocal(w, r)
}

// streamedMonitor serves a monitor a server sent over a stream (it authorized the caller).
func (s *HTTPServer) streamedMonitor(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.monitorLocal(w, r)
}

// servedMonitor streams this server agent's log lines over an agent stream, after checking the
// caller's token as its own HTTP API would. It ends when the stream closes (the caller left).
func (s *HTTPServer) servedMonitor(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := s.authorize(queryOptions(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckAgentRead}); err != nil {
		return nil, err
	}
	return s.monitorLocal(w, r)
}

// monitorLocal streams this process's log lines until the caller leaves or the agent stops.
func (s *HTTPServer) monitorLocal(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	level := hclog.Info
	if raw := q.Get("log_level"); raw != "" {
		level = hclog.LevelFromString(raw)
		if level == hclog.NoLevel {
			return nil, structs.BadRequest("Unknown log level: %s", raw)
		}
	}
	var logJSON, plain bool
	if err := parseQuery(r, queryParam{"log_json", &logJSON}, queryParam{"plain", &plain}); err != nil {
		return nil, err
	}
	root, ok := s.agent.logger.(hclog.InterceptLogger)
	if !ok {
		return nil, structs.NewErrCode(http.StatusNotImplemented, "this agent's logger cannot be monitored")
	}

	lines := make(chan []byte, monitorBuffer)
	sink := hclog.NewSinkAdapter(&hclog.LoggerOptions{
		Level:      level,
		JSONFormat: logJSON,
		Output:     monitorWriter(lines),
	})
	root.RegisterSink(sink)
	defer root.DeregisterSink(sink)
	s.agent.monitors.Add(1)
	defer s.agent.monitors.Add(-1)

	h := w.Header()
	h.Del("Content-Encoding")
	if plain {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		h.Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	enc := json.NewEncoder(w)
	send := func(frame *api.StreamFrame) error {
		var err error
		if plain {
			_, err = w.Write(frame.Data)
		} else {
			err = enc.Encode(frame)
		}
		if err == nil && flusher != nil {
			flusher.Flush()
		}
		return err
	}
	heartbeat := time.NewTicker(monitorHeartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil, nil
		case <-s.agent.ctx.Done():
			return nil, nil
		case line := <-lines:
			if err := send(&api.StreamFrame{Data: line}); err != nil {
				return nil, nil
			}
		case <-heartbeat.C:
			if !plain {
				if err := send(&api.StreamFrame{}); err != nil {
					return nil, nil
				}
			}
		}
	}
}

// monitorWriter hands each formatted line to a monitor without ever blocking the logger: a
// line that finds the buffer full is dropped.
type monitorWriter chan []byte

func (m monitorWriter) Write(p []byte) (int, error) {
	select {
	case m <- bytes.Clone(p): // the logger reuses p
	default:
	}
	return len(p), nil
}
