package connlimit

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Limiter counts open connections per client IP. The zero cap means unlimited, as upstream's
// limits do.
type Limiter struct {
	max  int
	mu   sync.Mutex
	byIP map[string]int
	// idle holds, per IP, the connections that wait for their next request and since when.
	// Only a Listener whose ConnState the server calls fills it.
	idle map[string]map[*conn]time.Time
}

// New returns a limiter allowing max connections per IP address; max <= 0 allows any number.
func New(max int) *Limiter {
	return &Limiter{max: max, byIP: map[string]int{}, idle: map[string]map[*conn]time.Time{}}
}

// Acquire takes a slot for the IP of addr. It reports false, taking nothing, when that IP
// already holds the cap. release gives the slot back; calling it more than once is safe, so
// every path that may end a connection can call it.
func (l *Limiter) Acquire(addr net.Addr) (release func(), ok bool) {
	if l == nil || l.max <= 0 {
		return func() {}, true
	}
	ip := IP(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byIP[ip] >= l.max {
		return nil, false
	}
	l.byIP[ip]++
	var once sync.Once
	return func() { once.Do(func() { l.release(ip) }) }, true
}

func (l *Limiter) setIdleLocked(ip string, c *conn, idle bool) {
	if c == nil {
		return
	}
	set := l.idle[ip]
	if !idle {
		delete(set, c)
		if len(set) == 0 {
			delete(l.idle, ip)
		}
		return
	}
	if set == nil {
		set = map[*conn]time.Time{}
		l.idle[ip] = set
	}
	set[c] = time.Now()
}

// longestIdle is the connection of ip that has waited longest for a request, nil for none.
// It is taken out of the idle set, so two accepts never pick the same one.
func (l *Limiter) longestIdle(ip string) *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	var oldest *conn
	var since time.Time
	for c, t := range l.idle[ip] {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	l.setIdleLocked(ip, oldest, false)
	return oldest
}

func (l *Limiter) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Entries are removed at zero so that a scan over many addresses leaves no map behind.
	if n := l.byIP[ip] - 1; n > 0 {
		l.byIP[ip] = n
	} else {
		delete(l.byIP, ip)
	}
}

// Count is how many connections ip holds now.
func (l *Limiter) Count(ip string) int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byIP[ip]
}

// Max is the cap per address; 0 is unlimited.
func (l *Limiter) Max() int {
	if l == nil || l.max <= 0 {
		return 0
	}
	return l.max
}

// IP is the address connections are counted under: the IP without the port. An address
// that is not host:port (a unix socket) counts under its whole string.
func IP(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}

// Listener wraps a listener so that every accepted connection holds a slot of its IP until
// it is closed. A connection past the cap is handed to Refuse (which may write a short
// answer) and closed; Accept then waits for the next one, so a refused flood never surfaces
// as an accept error.
type Listener struct {
	net.Listener
	Limiter *Limiter
	// Refuse, when set, runs on a connection over the cap before it is closed. It runs in
	// the accept loop, so it must not block: bound any write with a deadline.
	Refuse func(net.Conn)
}

// Accept returns the next connection whose IP is under the cap. At the cap, a connection
// of that IP which sits idle between requests (known through ConnState) is closed to make
// room: clients such as the official API client build a new transport for some calls and
// leave its keep-alive connection open, and such leftovers must not lock their own host
// out for the server's idle timeout. Connections busy with a request are never closed, so
// the cap still bounds what one address holds.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		release, ok := l.Limiter.Acquire(c.RemoteAddr())
		if !ok {
			if idle := l.Limiter.longestIdle(IP(c.RemoteAddr())); idle != nil {
				_ = idle.Close()
				release, ok = l.Limiter.Acquire(c.RemoteAddr())
			}
		}
		if !ok {
			if l.Refuse != nil {
				l.Refuse(c)
			}
			_ = c.Close()
			continue
		}
		return &conn{Conn: c, release: release, limiter: l.Limiter, ip: IP(c.RemoteAddr())}, nil
	}
}

// ConnState is an http.Server's ConnState hook: it tells the limiter which connections wait
// idle between requests, the ones Accept may close at the cap.
func (l *Listener) ConnState(c net.Conn, state http.ConnState) {
	// Under TLS the server sees the *tls.Conn around ours.
	for {
		if lc, ok := c.(*conn); ok {
			lc.setIdle(state == http.StateIdle)
			return
		}
		inner, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		c = inner.NetConn()
	}
}

// conn gives its slot back when closed. Whoever ends the connection (the HTTP server, or a
// handler that hijacked it for a websocket) closes it through this wrapper.
type conn struct {
	net.Conn
	release func()
	limiter *Limiter
	ip      string
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.setIdle(false)
	c.release()
	return err
}

func (c *conn) setIdle(idle bool) {
	if c.limiter == nil {
		return
	}
	c.limiter.mu.Lock()
	defer c.limiter.mu.Unlock()
	c.limiter.setIdleLocked(c.ip, c, idle)
}
