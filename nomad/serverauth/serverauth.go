package serverauth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/flynn/noise"
)

// ConnAuthenticated is the first byte of a connection that authenticates with the cluster key.
// The bytes that said "Raft" (0x01) and "RPC" (0x02) without any proof are never accepted.
const ConnAuthenticated byte = 0x10

// protocolVersion is sent inside the first handshake message; a server that does not know it
// refuses the connection instead of guessing the framing.
const protocolVersion byte = 1

// prologue binds the handshake to this protocol, so a transcript of another Noise protocol
// that happens to use the same key can never be replayed here.
var prologue = []byte("nomadfork server transport v1")

var cipherSuite = noise.NewCipherSuite(noise.DH25519, noise.CipherChaChaPoly, noise.HashSHA256)

// maxFrame is the largest Noise message (the spec's limit); a length prefix above it is refused
// before anything is allocated, so a peer cannot make us buffer more than one frame.
const maxFrame = noise.MaxMsgLen

// maxPlaintext is what fits in one frame beside the 16-byte authentication tag.
const maxPlaintext = maxFrame - 16

// ErrRefused is returned when a peer does not prove the cluster key (or speaks something else).
var ErrRefused = errors.New("peer did not authenticate with the cluster key")

// Key is a parsed cluster key. Its bytes are never printed: String gives a fixed text.
type Key struct {
	psk []byte
	// gossip is the operator's key as given: memberlist encrypts gossip with it directly.
	gossip []byte
}

// ParseKey reads `server { encrypt = ... }`: base64 (standard or URL alphabet) of 16, 24 or
// 32 random bytes, the sizes the gossip keyring accepts. The key is stretched to the 32-byte
// pre-shared key the handshake needs under a label of its own, so the same operator key used
// for gossip encryption and for this transport yields unrelated secrets.
func ParseKey(encoded string) (*Key, error) {
	encoded = strings.TrimSpace(encoded)
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		raw, err = base64.URLEncoding.DecodeString(encoded)
	}
	if err != nil {
		return nil, errors.New("server.encrypt: not valid base64")
	}
	switch len(raw) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("server.encrypt: key is %d bytes; it must be 16, 24 or 32 bytes (generate one with `openssl rand -base64 32`)", len(raw))
	}
	mac := sha256.New()
	mac.Write([]byte("nomadfork server transport psk\x00"))
	mac.Write(raw)
	return &Key{psk: mac.Sum(nil), gossip: raw}, nil
}

// GossipKey returns a copy of the operator's key bytes, for memberlist's SecretKey: gossip is
// encrypted with the same key servers prove to each other on the RPC port.
func (k *Key) GossipKey() []byte { return append([]byte(nil), k.gossip...) }

func (k *Key) String() string { return "cluster-key(redacted)" }

// GoString keeps %#v from printing the key's bytes.
func (k *Key) GoString() string { return k.String() }

// Client authenticates an outbound connection as a server speaking kind, proving the key and
// checking that the other side knows it too. On success every byte written to or read from
// the returned conn is encrypted and authenticated; on failure conn is closed.
func (k *Key) Client(conn net.Conn, kind byte, timeout time.Duration) (net.Conn, error) {
	sc, err := k.client(conn, kind, timeout)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return sc, nil
}

func (k *Key) client(conn net.Conn, kind byte, timeout time.Duration) (net.Conn, error) {
	_ = conn.SetDeadline(time.Now().Add(timeout))
	hs, err := k.handshake(true)
	if err != nil {
		return nil, err
	}
	// In NNpsk0 the first message is already encrypted under the pre-shared key: a responder
	// that cannot decrypt it learns nothing, not even which kind of stream was asked for.
	msg, _, _, err := hs.WriteMessage([]byte{ConnAuthenticated, 0, 0}, []byte{protocolVersion, kind})
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint16(msg[1:3], uint16(len(msg)-3))
	if _, err := conn.Write(msg); err != nil {
		return nil, err
	}
	reply, err := readFrame(conn, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	_, send, recv, err := hs.ReadMessage(nil, reply)
	if err != nil || send == nil {
		return nil, ErrRefused
	}
	_ = conn.SetDeadline(time.Time{})
	return &secureConn{Conn: conn, send: send, recv: recv}, nil
}

// Server authenticates an inbound connection whose first byte, ConnAuthenticated, the caller
// has already read. It returns the encrypted conn and the kind of stream the peer asked for.
// On failure conn is closed and nothing the peer sent has been passed on. A timeout of 0
// leaves the handshake unbounded (limits.rpc_handshake_timeout = 0).
func (k *Key) Server(conn net.Conn, timeout time.Duration) (net.Conn, byte, error) {
	sc, kind, err := k.server(conn, timeout)
	if err != nil {
		conn.Close()
		return nil, 0, err
	}
	return sc, kind, nil
}

func (k *Key) server(conn net.Conn, timeout time.Duration) (net.Conn, byte, error) {
	if timeout > 0 {
		_ = conn.SetDeadline(time.Now().Add(timeout))
	}
	hs, err := k.handshake(false)
	if err != nil {
		return nil, 0, err
	}
	first, err := readFrame(conn, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	payload, _, _, err := hs.ReadMessage(nil, first)
	if err != nil {
		return nil, 0, ErrRefused
	}
	if len(payload) != 2 || payload[0] != protocolVersion {
		return nil, 0, fmt.Errorf("%w: unknown protocol version", ErrRefused)
	}
	reply, recv, send, err := hs.WriteMessage([]byte{0, 0}, nil)
	if err != nil || send == nil {
		return nil, 0, ErrRefused
	}
	binary.BigEndian.PutUint16(reply[:2], uint16(len(reply)-2))
	if _, err := conn.Write(reply); err != nil {
		return nil, 0, err
	}
	_ = conn.SetDeadline(time.Time{})
	return &secureConn{Conn: conn, send: send, recv: recv}, payload[1], nil
}

func (k *Key) handshake(initiator bool) (*noise.HandshakeState, error) {
	return noise.NewHandshakeState(noise.Config{
		CipherSuite:           cipherSuite,
		Pattern:               noise.HandshakeNN,
		Initiator:             initiator,
		Prologue:              prologue,
		PresharedKey:          k.psk,
		PresharedKeyPlacement: 0,
	})
}

// readFrame reads one length-prefixed frame into buf (grown as needed).
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(hdr[:]))
	if n == 0 || n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// secureConn carries a byte stream in Noise transport messages: each frame is a 2-byte length
// and an AEAD ciphertext whose nonce is its position in the stream, so a dropped, reordered,
// replayed or altered frame fails to decrypt and ends the connection.
type secureConn struct {
	net.Conn

	writeMu sync.Mutex
	send    *noise.CipherState
	wbuf    []byte

	readMu  sync.Mutex
	recv    *noise.CipherState
	rframe  []byte
	plain   []byte
	pending []byte
	rerr    error
}

func (c *secureConn) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	written := 0
	for len(p) > 0 {
		chunk := p
		if len(chunk) > maxPlaintext {
			chunk = chunk[:maxPlaintext]
		}
		out, err := c.send.Encrypt(append(c.wbuf[:0], 0, 0), nil, chunk)
		if err != nil {
			return written, err
		}
		binary.BigEndian.PutUint16(out[:2], uint16(len(out)-2))
		c.wbuf = out
		if _, err := c.Conn.Write(out); err != nil {
			return written, err
		}
		written += len(chunk)
		p = p[len(chunk):]
	}
	return written, nil
}

func (c *secureConn) Read(p []byte) (int, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	for len(c.pending) == 0 {
		if c.rerr != nil {
			return 0, c.rerr
		}
		frame, err := readFrame(c.Conn, c.rframe)
		if err != nil {
			c.rerr = err
			continue
		}
		c.rframe = frame
		plain, err := c.recv.Decrypt(c.plain[:0], nil, frame)
		if err != nil {
			// A frame that fails authentication is an attack or corruption: nothing after it
			// can be trusted, so the stream ends here for good.
			c.rerr = fmt.Errorf("server transport: %w", ErrRefused)
			c.Conn.Close()
			continue
		}
		c.plain = plain
		c.pending = plain
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
