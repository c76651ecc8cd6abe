// Package slotconn is a connection that holds a slot of a bounded pool (the streams a server
// opens to one client, the requests a client agent relays) and gives it back when closed.
// Both ends of the client–server wire use it: the server in nomad/ and the client agent in
// client/. It lives under structs/ because that is the one tree both may import (the client
// imports only client/ and structs/, scripts/check-imports.sh); like structs it imports
// nothing else of this module.
package slotconn

import (
	"net"
	"sync"
)

// Conn is a connection that calls release exactly once, on its first Close.
type Conn struct {
	net.Conn
	once    sync.Once
	release func()
}

// New wraps conn, which holds a slot that release gives back.
func New(conn net.Conn, release func()) *Conn {
	return &Conn{Conn: conn, release: release}
}

// Close closes the connection and gives its slot back, once however often it is called.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
