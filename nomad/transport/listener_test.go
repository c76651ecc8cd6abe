package transport

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/nomad/serverauth"
	"github.com/shoenig/test/must"
)

const (
	clusterKey  = "5NEn9gQSVj1t0aRft5oiXlqXUMOLtueEDpybZxbiFt4="
	strangerKey = "87UHz5Qo403iLTaXOijzvDpUbFq08ZxKzBnfTUhjr5M="
)

func parseKey(t *testing.T, encoded string) *serverauth.Key {
	t.Helper()
	k, err := serverauth.ParseKey(encoded)
	must.NoError(t, err)
	return k
}

// echoOnce answers one line of what the peer wrote, so a test sees that its stream reached the
// function it was meant for.
func echoOnce(tag string) func(net.Conn) {
	return func(conn net.Conn) {
		defer conn.Close()
		buf := make([]byte, 4)
		if _, err := io.ReadFull(conn, buf); err != nil {
			return
		}
		_, _ = conn.Write(append([]byte(tag+":"), buf...))
	}
}

func listen(t *testing.T, key *serverauth.Key, limits Limits) *Listener {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", key, nil, limits, hclog.NewNullLogger(), echoOnce("rpc"), func(conn net.Conn, _ bool) {
		echoOnce("client")(conn)
	})
	must.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

func roundTrip(t *testing.T, conn net.Conn) string {
	t.Helper()
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, err := conn.Write([]byte("ping"))
	must.NoError(t, err)
	out, err := io.ReadAll(conn)
	must.NoError(t, err)
	return string(out)
}

// TestListener_RoutesEachKindAfterTheKeyHandshake: a server stream reaches serveRPC, a Raft
// stream reaches the Raft layer, a client agent's connection reaches serveClient; a stranger's
// key reaches nothing and is counted.
func TestListener_RoutesEachKindAfterTheKeyHandshake(t *testing.T) {
	key := parseKey(t, clusterKey)
	ln := listen(t, key, Limits{HandshakeTimeout: 5 * time.Second})
	addr := ln.ln.Addr().String()
	dialer := Dialer{Key: key}

	conn, err := dialer.Dial(addr, KindRPC, 5*time.Second)
	must.NoError(t, err)
	must.Eq(t, "rpc:ping", roundTrip(t, conn))

	layer := ln.RaftLayer(ln.ln.Addr())
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := layer.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	raftConn, err := dialer.Dial(addr, KindRaft, 5*time.Second)
	must.NoError(t, err)
	defer raftConn.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the Raft stream never reached the Raft layer")
	}

	plain, err := net.Dial("tcp", addr)
	must.NoError(t, err)
	_, err = plain.Write([]byte{KindClientAgent})
	must.NoError(t, err)
	must.Eq(t, "client:ping", roundTrip(t, plain))

	before := ln.Refused()
	_, err = Dialer{Key: parseKey(t, strangerKey)}.Dial(addr, KindRPC, 5*time.Second)
	if err == nil {
		// The dialing side may finish its half before the listener refuses; the refusal is
		// what counts.
		t.Log("the stranger's dial returned before the refusal")
	}
	deadline := time.Now().Add(10 * time.Second)
	for ln.Refused() == before {
		must.True(t, time.Now().Before(deadline), must.Sprint("a stranger's key was never refused"))
		time.Sleep(10 * time.Millisecond)
	}
}

// TestListener_CapsConnectionsPerAddress: beyond the cap, one address's next connection is
// closed unread, while the connections it holds stay counted.
func TestListener_CapsConnectionsPerAddress(t *testing.T) {
	ln := listen(t, parseKey(t, clusterKey), Limits{MaxConnsPerClient: 2, HandshakeTimeout: 30 * time.Second})
	addr := ln.ln.Addr().String()
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		must.NoError(t, err)
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for ln.ConnsFrom("127.0.0.1") < 2 {
		must.True(t, time.Now().Before(deadline), must.Sprint("the held connections were never counted"))
		time.Sleep(10 * time.Millisecond)
	}
	extra, err := net.Dial("tcp", addr)
	must.NoError(t, err)
	defer extra.Close()
	_ = extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = extra.Read(make([]byte, 1))
	must.ErrorIs(t, err, io.EOF)
	must.Eq(t, 2, ln.ConnsFrom("127.0.0.1"))
}

// TestDialKey_WithoutAKey names the missing setting instead of dialing.
func TestDialKey_WithoutAKey(t *testing.T) {
	_, err := DialKey(nil, "127.0.0.1:1", KindRPC, time.Second)
	must.ErrorIs(t, err, ErrNoClusterKey)
}
