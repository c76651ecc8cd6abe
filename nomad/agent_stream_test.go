package nomad

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestLookupServer: a server_id is a gossip name with or without its region, a node ID, or
// "leader", resolved the same on every server; anything else is upstream's "unknown Nomad
// server" (500), which errors.Is recognises on either side of the wire.
func TestLookupServer(t *testing.T) {
	servers := testCluster(t, 3)
	leader := leaderOf(servers)
	other := followerOf(servers)
	waitFor(t, 10*time.Second, func() bool {
		for _, s := range servers {
			if len(s.regionServers()) != 3 {
				return false
			}
		}
		return true
	})
	name := other.config.NodeName + ".global"
	for _, s := range servers {
		for _, id := range []string{name, other.config.NodeName, other.config.NodeID} {
			got, err := s.LookupServer(id)
			must.NoError(t, err)
			must.Eq(t, other.config.NodeID, got.ID)
			must.Eq(t, name, got.Name)
			must.Eq(t, s == other, got.Self)
			must.Eq(t, other.RaftAddr(), got.Addr)
		}
		got, err := s.LookupServer("leader")
		must.NoError(t, err)
		must.Eq(t, leader.config.NodeID, got.ID)
		must.Eq(t, s == leader, got.Self)

		_, err = s.LookupServer("nope.global")
		must.ErrorIs(t, err, structs.ErrUnknownServer)
		must.Eq(t, http.StatusInternalServerError, structs.ErrorCode(err))
		must.EqError(t, err, "unknown Nomad server nope.global")
	}
}

// TestAgentStream: a stream reaches the agent of the server dialled and carries bytes both
// ways; a server whose agent serves none refuses, and a stream meant for another server (its
// name moved) is refused rather than answered by the wrong one.
func TestAgentStream(t *testing.T) {
	servers := testCluster(t, 2)
	a, b := servers[0], servers[1]
	target := ServerTarget{Name: b.config.NodeName + ".global", ID: b.config.NodeID, Addr: b.RaftAddr()}

	_, err := a.DialServerAgent(target)
	must.Eq(t, http.StatusNotImplemented, structs.ErrorCode(err))

	// b's agent: an echo of one line.
	b.ServeAgentStreams(func() (net.Conn, error) {
		ours, theirs := net.Pipe()
		go func() {
			defer ours.Close()
			line, err := bufio.NewReader(ours).ReadString('\n')
			if err == nil {
				_, _ = io.WriteString(ours, "b:"+line)
			}
		}()
		return theirs, nil
	})
	conn, err := a.DialServerAgent(target)
	must.NoError(t, err)
	_, err = io.WriteString(conn, "hello\n")
	must.NoError(t, err)
	got, err := bufio.NewReader(conn).ReadString('\n')
	must.NoError(t, err)
	must.Eq(t, "b:hello\n", got)
	conn.Close()

	moved := target
	moved.ID = "0d8c2a4e-0000-0000-0000-000000000000"
	_, err = a.DialServerAgent(moved)
	must.True(t, errors.Is(err, structs.ErrUnknownServer), must.Sprint(err))
}
