package agent

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/nomadfork/nomad/internal/connlimit"
)

// Deadlines of the HTTP API. None may end a long response: blocking queries (up to 5m plus
// jitter), the event stream, log follow and exec websockets answer for minutes after the
// request has been read, so the server has no WriteTimeout. Nor has it a ReadTimeout: that is
// one deadline for the whole request, which a large upload on a slow link (a snapshot
// restore) would miss while making progress; the body deadline here moves with the bytes.
const (
	// httpHeaderTimeout bounds the wait for a request's headers: a connection that sends
	// nothing, or headers one byte at a time, is closed after it. Over HTTPS it is
	// limits.https_handshake_timeout when that is set, which Go also applies to the TLS
	// handshake.
	httpHeaderTimeout = 10 * time.Second
	// httpBodyIdleTimeout bounds a stall while a request body is being read: every read of
	// the body must make progress within it. Large uploads (a snapshot restore) keep going
	// as long as bytes arrive.
	httpBodyIdleTimeout = 30 * time.Second
	// refuseWriteTimeout bounds writing the 429 to a refused connection, which happens on
	// the accept loop.
	refuseWriteTimeout = 10 * time.Millisecond
)

// headerTimeout is the http.Server's ReadHeaderTimeout for the agent's limits.
func headerTimeout(https bool, limits *Limits) time.Duration {
	if https && limits != nil && limits.HTTPSHandshakeTimeout > 0 {
		return limits.HTTPSHandshakeTimeout
	}
	return httpHeaderTimeout
}

// limitHTTPListener caps the connections each client address holds on ln
// (limits.http_max_conns_per_client). It wraps the TCP listener, under TLS, so a connection
// counts from its first byte, the TLS handshake included. Over the cap a plain HTTP client is
// told why with a 429 (upstream does the same) and the connection is closed; an HTTPS client
// is closed without a word, since no TLS session exists yet to carry one.
func limitHTTPListener(ln net.Listener, limits *Limits, https bool, logger hclog.Logger) *connlimit.Listener {
	max := 0
	if limits != nil {
		max = limits.HTTPMaxConnsPerClient
	}
	var lastWarn atomic.Int64
	return &connlimit.Listener{
		Listener: ln,
		Limiter:  connlimit.New(max),
		Refuse: func(c net.Conn) {
			// With the sink's "nomad" prefix this is upstream's nomad.agent.http.exceeded.
			metrics.IncrCounter([]string{"agent", "http", "exceeded"}, 1)
			now := time.Now().UnixNano()
			// One line every few seconds at most: a flood must not fill the log.
			if last := lastWarn.Load(); now-last > int64(5*time.Second) && lastWarn.CompareAndSwap(last, now) {
				logger.Warn("refused an HTTP connection: its address holds the most connections allowed",
					"remote", c.RemoteAddr().String(), "limit", max, "option", "limits.http_max_conns_per_client")
			}
			if https {
				return
			}
			body := fmt.Sprintf("too many concurrent connections from this address (limits.http_max_conns_per_client = %d)\n", max)
			_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
			_, _ = io.WriteString(c, fmt.Sprintf("HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\n"+
				"Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body))
		},
	}
}

// withBodyDeadline gives a request body a read deadline that moves forward as bytes arrive,
// and clears it once the body has been read to its end. Go reads the connection in the
// background while a response is written, and a deadline left on it would cancel the
// request's context; Go clears the deadline itself when that read starts, and clearing it
// here too keeps long answers safe should a body reach its end some other way.
func withBodyDeadline(next http.Handler, idle time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody && idle > 0 {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(idle)) == nil {
				r.Body = &idleBody{ReadCloser: r.Body, rc: rc, idle: idle, extended: time.Now()}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// idleBody is a request body read under a moving deadline. Handlers read a body from one
// goroutine, so it needs no lock.
type idleBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	idle     time.Duration
	extended time.Time
	done     bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.done {
		return n, err
	}
	switch {
	case errors.Is(err, io.EOF):
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil:
		// The deadline stays: Go reads what is left of a body after the handler, and a
		// stalled one must fail there too rather than hold the connection open.
		b.done = true
	case n > 0:
		// Moving the deadline on every small read would cost a timer reset each time;
		// a quarter of the window is precise enough.
		if now := time.Now(); now.Sub(b.extended) > b.idle/4 {
			b.extended = now
			_ = b.rc.SetReadDeadline(now.Add(b.idle))
		}
	}
	return n, err
}
