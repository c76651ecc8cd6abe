package connlimit

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func tcp(ip string, port int) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: port} }

func TestLimiter_CapIsPerAddressAndReleased(t *testing.T) {
	cases := []struct {
		name string
		max  int
		// opens from one address before another address tries
		opens    int
		wantOK   int
		otherGet bool
	}{
		{name: "under the cap", max: 3, opens: 2, wantOK: 2, otherGet: true},
		{name: "at the cap", max: 3, opens: 5, wantOK: 3, otherGet: true},
		{name: "zero is unlimited", max: 0, opens: 500, wantOK: 500, otherGet: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := New(tc.max)
			var releases []func()
			for i := 0; i < tc.opens; i++ {
				if rel, ok := l.Acquire(tcp("127.0.0.50", 1000+i)); ok {
					releases = append(releases, rel)
				}
			}
			must.Len(t, tc.wantOK, releases)
			_, ok := l.Acquire(tcp("127.0.0.1", 1))
			must.Eq(t, tc.otherGet, ok)

			if tc.max > 0 {
				must.Eq(t, tc.wantOK, l.Count("127.0.0.50"))
				// A release given twice frees one slot, not two.
				releases[0]()
				releases[0]()
				must.Eq(t, tc.wantOK-1, l.Count("127.0.0.50"))
				_, ok = l.Acquire(tcp("127.0.0.50", 9))
				must.True(t, ok)
				_, ok = l.Acquire(tcp("127.0.0.50", 10))
				must.Eq(t, tc.opens < tc.max, ok)
			}
		})
	}
}

func TestLimiter_ForgetsAddressesAtZero(t *testing.T) {
	l := New(1)
	for i := 0; i < 100; i++ {
		rel, ok := l.Acquire(tcp(net.IPv4(10, 0, 0, byte(i)).String(), 1))
		must.True(t, ok)
		rel()
	}
	must.MapEmpty(t, l.byIP)
}

func TestIP(t *testing.T) {
	cases := []struct {
		name string
		addr net.Addr
		want string
	}{
		{name: "tcp v4", addr: tcp("127.0.0.50", 4646), want: "127.0.0.50"},
		{name: "tcp v6", addr: tcp("::1", 4646), want: "::1"},
		{name: "unix", addr: &net.UnixAddr{Name: "/run/x.sock", Net: "unix"}, want: "/run/x.sock"},
		{name: "nil", addr: nil, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, IP(tc.addr))
		})
	}
}

func TestListener_RefusesOverTheCapAndFreesOnClose(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	refused := make(chan string, 4)
	ln := &Listener{Listener: inner, Limiter: New(1), Refuse: func(c net.Conn) {
		refused <- IP(c.RemoteAddr())
	}}
	t.Cleanup(func() { _ = ln.Close() })

	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()

	first, err := net.Dial("tcp", inner.Addr().String())
	must.NoError(t, err)
	defer first.Close()
	served := <-accepted

	second, err := net.Dial("tcp", inner.Addr().String())
	must.NoError(t, err)
	defer second.Close()
	must.Eq(t, "127.0.0.1", <-refused)

	// Closing the served connection frees its slot for the next one.
	must.NoError(t, served.Close())
	third, err := net.Dial("tcp", inner.Addr().String())
	must.NoError(t, err)
	defer third.Close()
	c := <-accepted
	must.NotNil(t, c)
	_ = c.Close()
}

// TestListener_ClosesIdleConnectionsAtTheCap: keep-alive connections left idle by clients
// that made a new transport per call give way to a new connection of the same address, while
// connections busy with a request are never taken and the cap still refuses past them.
func TestListener_ClosesIdleConnectionsAtTheCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	refused := make(chan struct{}, 16)
	ln := &Listener{Listener: inner, Limiter: New(3), Refuse: func(c net.Conn) { refused <- struct{}{} }}
	block := make(chan struct{})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				<-block
			}
			_, _ = io.WriteString(w, "ok")
		}),
		ConnState: ln.ConnState,
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + inner.Addr().String()

	// Each client is its own transport, as a client built per call is: its connection
	// stays open and idle after the answer.
	get := func(path string) error {
		c := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
		resp, err := c.Get(url + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	for i := 0; i < 10; i++ {
		must.NoError(t, get("/"), must.Sprintf("call %d", i))
		waitFor(t, "the answered connection to be idle", func() bool { return idleCount(ln) == min(i+1, 3) })
	}
	must.Eq(t, 3, ln.Limiter.Count("127.0.0.1"))
	must.Eq(t, 0, len(refused))
	// The server marks a connection idle after its answer, which the client may have read
	// before: wait until all three are known idle, or a busy-looking one would be refused.
	waitFor(t, "three idle connections", func() bool { return idleCount(ln) == 3 })

	// Three requests in flight hold every slot: none of them is idle, so a fourth connection
	// is refused rather than a busy one closed.
	var busy sync.WaitGroup
	busyErrs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		busy.Add(1)
		go func() {
			defer busy.Done()
			busyErrs <- get("/block")
		}()
	}
	waitFor(t, "three busy connections", func() bool { return busyCount(ln) == 3 })
	must.Error(t, get("/"))
	must.Eq(t, 1, len(refused))
	close(block)
	busy.Wait()
	close(busyErrs)
	for err := range busyErrs {
		must.NoError(t, err)
	}
}

// busyCount is how many connections of 127.0.0.1 are open and not idle.
func busyCount(ln *Listener) int {
	ln.Limiter.mu.Lock()
	defer ln.Limiter.mu.Unlock()
	return ln.Limiter.byIP["127.0.0.1"] - len(ln.Limiter.idle["127.0.0.1"])
}

// idleCount is how many connections of 127.0.0.1 wait idle between requests.
func idleCount(ln *Listener) int {
	ln.Limiter.mu.Lock()
	defer ln.Limiter.mu.Unlock()
	return len(ln.Limiter.idle["127.0.0.1"])
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
