package agent

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/tlsutil/tlstest"
	"github.com/shoenig/test/must"
)

// attackerIP is a loopback address other than 127.0.0.1: on Linux the whole of 127/8 is
// local, so a dialer bound to it reaches the agent as a different client address.
const attackerIP = "127.0.0.50"

func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", addr)
	must.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// slowBodyStart is a request whose body promises far more than is ever sent.
const slowBodyStart = "PUT /v1/jobs HTTP/1.1\r\nHost: nomad\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"

// readToClose reads conn until the agent closes it and returns what it sent. The deadline
// only stops a broken test from hanging; reaching it fails the test.
func readToClose(t *testing.T, conn net.Conn) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the agent left the connection open")
	}
	return string(got)
}

func httpCount(ta *TestAgent, ip string) int { return ta.Agent.http.conns.Count(ip) }

func waitHTTPCount(t *testing.T, ta *TestAgent, ip string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for httpCount(ta, ip) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d connections, want %d", ip, httpCount(ta, ip), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Security finding (issue 19, item 2): ~20,000 slow-body connections from one address used up
// the agent's file descriptors, and health checks, the CLI and node registration hung.
func TestSecurity_HTTPStrangerHoldingSlowConnectionsDoesNotStarveOthers(t *testing.T) {
	ta := NewTestAgent(t, nil)
	addr := ta.Agent.HTTPAddr()
	for i := range 300 {
		conn := dialFrom(t, attackerIP, addr)
		if i%2 == 0 {
			_, _ = io.WriteString(conn, slowBodyStart)
		}
	}
	waitHTTPCount(t, ta, attackerIP, 100)

	c := ta.Client("")
	_, err := c.Status().Leader()
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	// One more from the stranger is told why and closed.
	extra := dialFrom(t, attackerIP, addr)
	_, _ = io.WriteString(extra, "GET /v1/status/leader HTTP/1.1\r\nHost: nomad\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(readToClose(t, extra))), nil)
	must.NoError(t, err)
	must.Eq(t, http.StatusTooManyRequests, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	must.StrContains(t, string(body), "limits.http_max_conns_per_client = 100")
}

func TestSecurity_HTTPPerClientCapIsEnforcedAndReleased(t *testing.T) {
	cases := []struct {
		name  string
		limit int
		open  int
		// wantHeld is how many of open the agent keeps.
		wantHeld int
	}{
		{name: "cap of three", limit: 3, open: 4, wantHeld: 3},
		{name: "zero is unlimited", limit: 0, open: 150, wantHeld: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ta := NewTestAgent(t, func(c *Config) { c.Limits.HTTPMaxConnsPerClient = tc.limit })
			addr := ta.Agent.HTTPAddr()
			var held []net.Conn
			for range tc.open {
				held = append(held, dialFrom(t, attackerIP, addr))
			}
			if tc.limit == 0 {
				// Nothing is counted, and every connection is served.
				for _, conn := range held {
					_, err := io.WriteString(conn, "GET /v1/status/leader HTTP/1.1\r\nHost: nomad\r\nConnection: close\r\n\r\n")
					must.NoError(t, err)
					must.StrHasPrefix(t, "HTTP/1.1 200 OK", readToClose(t, conn))
				}
				must.Eq(t, 0, httpCount(ta, attackerIP))
				return
			}
			waitHTTPCount(t, ta, attackerIP, tc.wantHeld)
			must.StrHasPrefix(t, "HTTP/1.1 429 Too Many Requests", readToClose(t, held[tc.open-1]))

			// Closing one frees its slot for the next.
			must.NoError(t, held[0].Close())
			waitHTTPCount(t, ta, attackerIP, tc.wantHeld-1)
			next := dialFrom(t, attackerIP, addr)
			waitHTTPCount(t, ta, attackerIP, tc.wantHeld)
			_, err := io.WriteString(next, "GET /v1/status/leader HTTP/1.1\r\nHost: nomad\r\nConnection: close\r\n\r\n")
			must.NoError(t, err)
			must.StrHasPrefix(t, "HTTP/1.1 200 OK", readToClose(t, next))

			_, err = ta.Client("").Status().Leader()
			must.NoError(t, err)
		})
	}
}

func TestSecurity_HTTPSlowAndSilentConnectionsAreClosed(t *testing.T) {
	t.Run("body that stalls", func(t *testing.T) {
		ta := NewTestAgent(t, func(c *Config) { c.httpBodyIdleTimeout = 300 * time.Millisecond })
		conn := dialFrom(t, attackerIP, ta.Agent.HTTPAddr())
		_, err := io.WriteString(conn, slowBodyStart)
		must.NoError(t, err)
		readToClose(t, conn)
		waitHTTPCount(t, ta, attackerIP, 0)
	})
	// The read-header deadline: without it Go waits for headers for ever, and a connection
	// that sends nothing, or drips its headers, holds its slot and its descriptor.
	t.Run("connection that sends nothing", func(t *testing.T) {
		ta := NewTestAgent(t, func(c *Config) { c.httpHeaderTimeout = 300 * time.Millisecond })
		conn := dialFrom(t, attackerIP, ta.Agent.HTTPAddr())
		waitHTTPCount(t, ta, attackerIP, 1)
		start := time.Now()
		readToClose(t, conn)
		must.Less(t, 10*time.Second, time.Since(start))
		waitHTTPCount(t, ta, attackerIP, 0)
	})
	t.Run("headers that drip and never end", func(t *testing.T) {
		ta := NewTestAgent(t, func(c *Config) { c.httpHeaderTimeout = 300 * time.Millisecond })
		conn := dialFrom(t, attackerIP, ta.Agent.HTTPAddr())
		stop := make(chan struct{})
		dripped := make(chan struct{})
		go func() {
			defer close(dripped)
			if _, err := io.WriteString(conn, "GET /v1/status/leader HTTP/1.1\r\nHost: nomad\r\n"); err != nil {
				return
			}
			for {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := io.WriteString(conn, "X-Drip: 1\r\n"); err != nil {
					return
				}
			}
		}()
		start := time.Now()
		got := readToClose(t, conn)
		close(stop)
		<-dripped
		must.Less(t, 10*time.Second, time.Since(start))
		must.StrNotContains(t, got, "200 OK")
		waitHTTPCount(t, ta, attackerIP, 0)
	})
	t.Run("HTTPS connection that never starts its handshake", func(t *testing.T) {
		ca := tlstest.NewCA(t, "cluster")
		server := ca.Issue(t, "server", []string{"server.global.nomad"})
		ta := NewTestAgent(t, func(c *Config) {
			c.TLS = &TLSConfig{EnableHTTP: true, CAFile: ca.CertFile, CertFile: server.CertFile, KeyFile: server.KeyFile}
			c.Limits.HTTPSHandshakeTimeout = 300 * time.Millisecond
		})
		conn := dialFrom(t, attackerIP, ta.Agent.HTTPAddr())
		readToClose(t, conn)
		waitHTTPCount(t, ta, attackerIP, 0)
	})
}

// The body deadline must not outlive the body: Go reads the connection in the background
// while a handler answers, and a deadline left on it would cancel the request's context,
// ending a blocking query (or a log follow) that began after a body was read. A stalled body
// still ends with an error.
func TestHTTP_BodyDeadlineEndsWithTheBody(t *testing.T) {
	const idle = 200 * time.Millisecond
	handler := func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
			return
		}
		// Answer well after the body deadline would have passed.
		select {
		case <-r.Context().Done():
			http.Error(w, "request context ended", http.StatusInternalServerError)
		case <-time.After(5 * idle):
			_, _ = io.WriteString(w, "done")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	srv := &http.Server{Handler: withBodyDeadline(http.HandlerFunc(handler), idle), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	})

	cases := []struct {
		name     string
		send     string
		wantCode string
	}{
		{name: "whole body, then a long answer", send: "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}", wantCode: "200"},
		{name: "chunked body, then a long answer", send: "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n", wantCode: "200"},
		{name: "body that stalls", send: "PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{", wantCode: "400"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := dialFrom(t, "127.0.0.1", ln.Addr().String())
			_, err := io.WriteString(conn, tc.send)
			must.NoError(t, err)
			got := readToClose(t, conn)
			must.StrHasPrefix(t, "HTTP/1.1 "+tc.wantCode, got)
		})
	}
}

// Long answers outlive every deadline the limits add: a blocking query that waits past the
// body deadline, on the keep-alive connection a write with a body used just before.
func TestSecurity_HTTPLimitsLeaveBlockingQueriesWorking(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) {
		c.httpBodyIdleTimeout = 200 * time.Millisecond
		c.Limits.HTTPMaxConnsPerClient = 2
	})
	c := ta.Client("")
	resp, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	_, meta, err := c.Jobs().List(&api.QueryOptions{WaitIndex: resp.JobModifyIndex, WaitTime: time.Second})
	must.NoError(t, err)
	must.Eq(t, resp.JobModifyIndex, meta.LastIndex)
}

// The limits block reaches the RPC listener; 0 keeps upstream's meaning (no limit).
func TestAgent_ServerConfigCarriesRPCLimits(t *testing.T) {
	cases := []struct {
		name        string
		hcl         string
		wantConns   int
		wantTimeout time.Duration
	}{
		{name: "defaults", hcl: "", wantConns: 100, wantTimeout: 5 * time.Second},
		{name: "set", hcl: "limits {\n  rpc_max_conns_per_client = 7\n  rpc_handshake_timeout = \"2s\"\n}\n", wantConns: 7, wantTimeout: 2 * time.Second},
		{name: "zero is unlimited", hcl: "limits {\n  rpc_max_conns_per_client = 0\n  rpc_handshake_timeout = \"0s\"\n}\n", wantConns: 0, wantTimeout: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file, err := loadConfigString(t, "limits.hcl", tc.hcl)
			must.NoError(t, err)
			cfg := DefaultConfig().Merge(file)
			sc := serverConfig(cfg, hclog.NewNullLogger())
			must.Eq(t, tc.wantConns, sc.RPCMaxConnsPerClient)
			must.Eq(t, tc.wantTimeout, sc.RPCHandshakeTimeout)
		})
	}
}
