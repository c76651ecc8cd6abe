package serverauth

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

const (
	keyA = "5NEn9gQSVj1t0aRft5oiXlqXUMOLtueEDpybZxbiFt4="
	keyB = "q0Z8m7n0JqQ2a1mJQk3c1yq8F9YtK2vUO4Xb6wP0s1E="
)

func parse(t *testing.T, s string) *Key {
	t.Helper()
	k, err := ParseKey(s)
	must.NoError(t, err)
	return k
}

// recordingConn keeps every byte written to it, so a test can replay or alter them.
type recordingConn struct {
	net.Conn
	written bytes.Buffer
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.written.Write(p)
	return c.Conn.Write(p)
}

type result struct {
	conn net.Conn
	kind byte
	err  error
}

// serve runs the server side of a handshake on conn, reading the first byte as the listener
// does.
func serve(key *Key, conn net.Conn) <-chan result {
	out := make(chan result, 1)
	go func() {
		var first [1]byte
		if _, err := io.ReadFull(conn, first[:]); err != nil {
			out <- result{err: err}
			return
		}
		if first[0] != ConnAuthenticated {
			out <- result{err: errors.New("not authenticated")}
			return
		}
		c, kind, err := key.Server(conn, 2*time.Second)
		out <- result{conn: c, kind: kind, err: err}
	}()
	return out
}

func TestParseKey(t *testing.T) {
	cases := []struct {
		name    string
		key     string
		wantErr string
	}{
		{name: "32 bytes", key: keyA},
		{name: "16 bytes", key: "AAECAwQFBgcICQoLDA0ODw=="},
		{name: "url alphabet", key: "q0Z8m7n0JqQ2a1mJQk3c1yq8F9YtK2vUO4Xb6wP0s1E="},
		{name: "too short", key: "c2VjcmV0", wantErr: "key is 6 bytes"},
		{name: "not base64", key: "!!!", wantErr: "not valid base64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParseKey(tc.key)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			for _, printed := range []string{k.String(), fmt.Sprintf("%v", k), fmt.Sprintf("%#v", k), fmt.Sprintf("%+v", k)} {
				must.Eq(t, "cluster-key(redacted)", printed)
			}
		})
	}
}

func TestHandshake_SameKeyCarriesTheStream(t *testing.T) {
	a, b := net.Pipe()
	server := serve(parse(t, keyA), b)
	client, err := parse(t, keyA).Client(a, 0x02, 2*time.Second)
	must.NoError(t, err)
	res := <-server
	must.NoError(t, res.err)
	must.Eq(t, byte(0x02), res.kind)

	// More than one frame each way, so chunking and reassembly are exercised.
	payload := make([]byte, 3*maxPlaintext+123)
	_, _ = rand.Read(payload)
	go func() {
		_, _ = client.Write(payload)
	}()
	got := make([]byte, len(payload))
	_, err = io.ReadFull(res.conn, got)
	must.NoError(t, err)
	must.Eq(t, payload, got)

	go func() { _, _ = res.conn.Write([]byte("pong")) }()
	reply := make([]byte, 4)
	_, err = io.ReadFull(client, reply)
	must.NoError(t, err)
	must.Eq(t, "pong", string(reply))
}

func TestHandshake_WrongKeyIsRefusedOnBothSides(t *testing.T) {
	a, b := net.Pipe()
	server := serve(parse(t, keyA), b)
	_, err := parse(t, keyB).Client(a, 0x01, 2*time.Second)
	must.Error(t, err)
	res := <-server
	must.ErrorIs(t, res.err, ErrRefused)
}

// A recorded first message replayed by someone without the key gets an answer it cannot
// use: the server never passes on a byte that was not sealed under the session's keys.
func TestHandshake_ReplayedOpeningCannotInjectTraffic(t *testing.T) {
	a, b := net.Pipe()
	rec := &recordingConn{Conn: a}
	server := serve(parse(t, keyA), b)
	client, err := parse(t, keyA).Client(rec, 0x01, 2*time.Second)
	must.NoError(t, err)
	res := <-server
	must.NoError(t, res.err)
	client.Close()
	opening := append([]byte(nil), rec.written.Bytes()...)

	c, d := net.Pipe()
	replayed := serve(parse(t, keyA), d)
	go func() {
		_, _ = c.Write(opening)
		// Drain the server's answer, then send a frame the attacker made up.
		buf := make([]byte, 1024)
		_, _ = c.Read(buf)
		_, _ = c.Write([]byte{0, 20, 'f', 'o', 'r', 'g', 'e', 'd', ' ', 'a', 'p', 'p', 'e', 'n', 'd', ' ', 'e', 'n', 't', 'r', 'y', '!'})
	}()
	res = <-replayed
	must.NoError(t, res.err) // the opening itself is valid; what follows is not
	_ = res.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := res.conn.Read(make([]byte, 64))
	must.Eq(t, 0, n)
	must.ErrorIs(t, err, ErrRefused)
}

func TestSecureConn_TamperedFrameEndsTheStream(t *testing.T) {
	a, b := net.Pipe()
	server := serve(parse(t, keyA), b)
	raw := &flipConn{Conn: a}
	client, err := parse(t, keyA).Client(raw, 0x02, 2*time.Second)
	must.NoError(t, err)
	res := <-server
	must.NoError(t, res.err)

	raw.flip = true
	go func() { _, _ = client.Write([]byte("Purge: false")) }()
	n, err := res.conn.Read(make([]byte, 64))
	must.Eq(t, 0, n)
	must.ErrorIs(t, err, ErrRefused)
}

func TestSecureConn_EmptyFrameRefused(t *testing.T) {
	_, err := readFrame(bytes.NewReader([]byte{0, 0}), nil)
	must.ErrorContains(t, err, "frame of 0 bytes")
}

// flipConn flips the last byte of each write once flip is set.
type flipConn struct {
	net.Conn
	flip bool
}

func (c *flipConn) Write(p []byte) (int, error) {
	if c.flip && len(p) > 0 {
		q := append([]byte(nil), p...)
		q[len(q)-1] ^= 0x01
		return c.Conn.Write(q)
	}
	return c.Conn.Write(p)
}

// BenchmarkHandshake measures the cost a forwarded RPC pays to open its connection.
func BenchmarkHandshake(b *testing.B) {
	key, err := ParseKey(keyA)
	must.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		a, c := net.Pipe()
		server := serve(key, c)
		client, err := key.Client(a, 0x02, 2*time.Second)
		must.NoError(b, err)
		res := <-server
		must.NoError(b, res.err)
		client.Close()
		res.conn.Close()
	}
}

// BenchmarkSecureConnThroughput measures Raft-sized writes through the encrypted stream.
func BenchmarkSecureConnThroughput(b *testing.B) {
	key, err := ParseKey(keyA)
	must.NoError(b, err)
	a, c := net.Pipe()
	server := serve(key, c)
	client, err := key.Client(a, 0x01, 2*time.Second)
	must.NoError(b, err)
	res := <-server
	must.NoError(b, res.err)
	defer client.Close()
	go func() { _, _ = io.Copy(io.Discard, res.conn) }()
	payload := make([]byte, 256<<10)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		_, err := client.Write(payload)
		must.NoError(b, err)
	}
}
