//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"
)

// The security group of issue 8, against the built binary: each test is one finding an
// attacker reproduced, and what the server must do instead.

// securityAgent starts a single server (with a client running raw_exec) on a persistent data
// dir and returns it with its RPC address (the leader's address is its own).
func securityAgent(t *testing.T) (*agentProc, string) {
	t.Helper()
	path, url := writeConfig(t, t.TempDir(), `
client {
  enabled = true
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`)
	a := startAgent(t, path, url)
	rpcAddr, err := a.client().Status().Leader()
	must.NoError(t, err)
	return a, rpcAddr
}

// restart stops the agent with SIGKILL and starts it again on the same data dir.
func (a *agentProc) restart() *agentProc {
	a.kill9()
	return startAgent(a.t, a.config, a.httpURL)
}

type rawResult struct {
	status int
	body   string
}

func (a *agentProc) raw(method, path string, body []byte) rawResult {
	a.t.Helper()
	req, err := http.NewRequest(method, a.httpURL+path, bytes.NewReader(body))
	must.NoError(a.t, err)
	// On the code before the fix these requests ran for minutes; the suite's timeout is the
	// backstop, this one turns a hang into a readable failure.
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	must.NoError(a.t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return rawResult{status: resp.StatusCode, body: string(out)}
}

func registerBody(t *testing.T, job *api.Job) []byte {
	t.Helper()
	buf, err := json.Marshal(&api.JobRegisterRequest{Job: job})
	must.NoError(t, err)
	return buf
}

// bareRaftLayer dials the server's RPC port and opens a Raft stream the way the port used to
// accept one: a single 0x01 byte, no proof of anything.
type bareRaftLayer struct{}

func (bareRaftLayer) Accept() (net.Conn, error) { select {} }
func (bareRaftLayer) Close() error              { return nil }
func (bareRaftLayer) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (bareRaftLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", string(addr), timeout)
	if err != nil {
		return nil, err
	}
	_, err = conn.Write([]byte{0x01})
	return conn, err
}

func TestSecurity_E2E_StrangerCannotSpeakRaft(t *testing.T) {
	a, rpcAddr := securityAgent(t)
	_, _, err := a.client().Jobs().Register(testJob("keep"), nil)
	must.NoError(t, err)

	trans := raft.NewNetworkTransport(bareRaftLayer{}, 1, 2*time.Second, io.Discard)
	defer trans.Close()
	req := &raft.AppendEntriesRequest{
		RPCHeader:         raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("stranger"), Addr: []byte("127.0.0.1:1")},
		Term:              1 << 20,
		Entries:           []*raft.Log{{Index: 1 << 20, Term: 1 << 20, Type: raft.LogCommand, Data: []byte{1}}},
		LeaderCommitIndex: 1 << 20,
	}
	var resp raft.AppendEntriesResponse
	must.Error(t, trans.AppendEntries("any", raft.ServerAddress(rpcAddr), req, &resp))

	a = a.restart()
	job, _, err := a.client().Jobs().Info("keep", nil)
	must.NoError(t, err)
	must.Eq(t, "keep", *job.ID)
	leader, err := a.client().Status().Leader()
	must.NoError(t, err)
	must.Eq(t, rpcAddr, leader)
}

func TestSecurity_E2E_DeepTaskConfigIsRefusedAndTheServerRestarts(t *testing.T) {
	a, _ := securityAgent(t)
	job := testJob("deep")
	var deep any = "leaf"
	for i := 0; i < 1030; i++ {
		deep = map[string]any{"n": deep}
	}
	job.TaskGroups[0].Tasks[0].Config["nested"] = deep
	res := a.raw("PUT", "/v1/jobs", registerBody(t, job))
	must.Eq(t, 400, res.status, must.Sprint(res.body))
	must.StrContains(t, res.body, "deep")

	// The server is up, and a restart replays a log with nothing it cannot decode.
	_, _, err := a.client().Jobs().Register(testJob("after"), nil)
	must.NoError(t, err)
	a = a.restart()
	_, _, err = a.client().Jobs().Info("after", nil)
	must.NoError(t, err)
}

func TestSecurity_E2E_ParseBombIsRefused(t *testing.T) {
	a, _ := securityAgent(t)
	spec := `
job "bomb" {
  meta {
    x = join(",", [for a in range(1024) : join(",", [for b in range(1024) : join(",", [for c in range(1024) : "${a}-${b}-${c}"])])])
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`
	body, err := json.Marshal(&api.JobsParseRequest{JobHCL: spec})
	must.NoError(t, err)
	res := a.raw("POST", "/v1/jobs/parse", body)
	must.Eq(t, 400, res.status, must.Sprint(res.body))
	must.StrContains(t, res.body, "exceeds the evaluation budget", must.Sprint(res.body))

	// The agent is still serving.
	_, _, err = a.client().Jobs().List(nil)
	must.NoError(t, err)
}
