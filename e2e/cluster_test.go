//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// e2eClusterKey is the servers' shared key; without it servers refuse to join each other.
const e2eClusterKey = "8cWkhGKp0iR3Tj0Y6c2sH5bJq1Xy7mVfN3eLrA9dZtU="

// e2eServer is one server process of a cluster startServers made.
type e2eServer struct {
	*agentProc
	rpcAddr string
	dataDir string
}

// startServers starts n servers on loopback that find each other with retry_join and
// bootstrap_expect = n, the i-th on the data dir dataDir(i), and waits until each has a
// leader that commits.
func startServers(t *testing.T, n int, dataDir func(i int) string) []*e2eServer {
	t.Helper()
	type ports struct{ http, rpc, serf int }
	nodes := make([]ports, n)
	var joins []string
	for i := range nodes {
		nodes[i] = ports{http: freePort(t), rpc: freePort(t), serf: freePort(t)}
		joins = append(joins, fmt.Sprintf("%q", fmt.Sprintf("127.0.0.1:%d", nodes[i].serf)))
	}
	servers := make([]*e2eServer, n)
	for i, nd := range nodes {
		dir := dataDir(i)
		cfg := fmt.Sprintf(`
name      = "server-%d"
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
server {
  enabled          = true
  bootstrap_expect = %d
  retry_join       = [%s]
  encrypt          = %q
}
`, i, dir, nd.http, nd.rpc, nd.serf, n, joinList(joins), e2eClusterKey)
		path := filepath.Join(t.TempDir(), "agent.hcl")
		must.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
		servers[i] = &e2eServer{
			agentProc: startAgentNoWait(t, path, fmt.Sprintf("http://127.0.0.1:%d", nd.http)),
			rpcAddr:   fmt.Sprintf("127.0.0.1:%d", nd.rpc),
			dataDir:   dir,
		}
	}
	for _, s := range servers {
		s.waitForLeader()
	}
	return servers
}

func agentsOf(servers []*e2eServer) []*agentProc {
	out := make([]*agentProc, len(servers))
	for i, s := range servers {
		out[i] = s.agentProc
	}
	return out
}

// TestCluster_ThreeServers runs three server processes that find each other with retry_join
// and bootstrap_expect = 3, writes through a follower, kills the leader with SIGKILL and
// checks the survivors elect a new leader, keep every write and accept new ones.
func TestCluster_ThreeServers(t *testing.T) {
	const n = 3
	servers := startServers(t, n, func(int) string { return t.TempDir() })
	agents := agentsOf(servers)

	leaderRPC, err := agents[0].client().Status().Leader()
	must.NoError(t, err)
	var leader, follower *agentProc
	for i, a := range agents {
		if servers[i].rpcAddr == leaderRPC {
			leader = a
		} else if follower == nil {
			follower = a
		}
	}
	must.NotNil(t, leader)
	// A majority elects the leader; every server knows all n peers a moment later.
	for _, a := range agents {
		deadline := time.Now().Add(15 * time.Second)
		for {
			peers, err := a.client().Status().Peers()
			if err == nil && len(peers) == n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("server at %s never saw %d peers: %v %v", a.httpURL, n, peers, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Gossip lists the three servers and the CLI shows them and the Raft peers.
	members, err := agents[0].client().Agent().Members()
	must.NoError(t, err)
	must.Len(t, n, members.Members)
	for _, m := range members.Members {
		must.Eq(t, "alive", m.Status)
	}
	out, code := nomadIn(t, t.TempDir(), nil, "server", "members", "-address", agents[0].httpURL)
	must.Eq(t, 0, code, must.Sprint(out))
	must.Eq(t, n+1, len(strings.Split(strings.TrimSpace(out), "\n")), must.Sprint(out))
	out, code = nomadIn(t, t.TempDir(), nil, "operator", "raft", "list-peers", "-address", agents[0].httpURL)
	must.Eq(t, 0, code, must.Sprint(out))
	must.Eq(t, 1, strings.Count(out, "leader"), must.Sprint(out))
	must.Eq(t, n-1, strings.Count(out, "follower"), must.Sprint(out))

	// Writes through a follower are forwarded to the leader.
	for i := 0; i < 5; i++ {
		_, _, err := follower.client().Jobs().Register(testJob(fmt.Sprintf("job-%d", i)), nil)
		must.NoError(t, err)
	}
	leader.kill9()

	var survivor *agentProc
	for _, a := range agents {
		if a != leader {
			survivor = a
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := survivor.client().Status().Leader()
		if err == nil && l != "" && l != leaderRPC {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no new leader after the old one was killed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := 0; i < 5; i++ {
		job, _, err := survivor.client().Jobs().Info(fmt.Sprintf("job-%d", i), nil)
		must.NoError(t, err)
		must.Eq(t, fmt.Sprintf("job-%d", i), *job.ID)
	}
	_, _, err = survivor.client().Jobs().Deregister("job-0", true, nil)
	must.NoError(t, err)

	// Gossip marks the killed leader failed and autopilot (cleanup_dead_servers, on by
	// default) removes it from Raft.
	deadline = time.Now().Add(60 * time.Second)
	for {
		peers, err := survivor.client().Status().Peers()
		if err == nil && len(peers) == n-1 {
			must.SliceNotContains(t, peers, leaderRPC)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed leader was never removed from Raft: %v %v", peers, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func joinList(quoted []string) string {
	out := ""
	for i, q := range quoted {
		if i > 0 {
			out += ", "
		}
		out += q
	}
	return out
}

// TestCluster_LeaveOnTerminateAndRejoin stops a follower with SIGTERM under
// leave_on_terminate: it leaves gossip and Raft at once (no wait for failure detection), then
// starts again on its data dir and the leader adds it back once it authenticates.
func TestCluster_LeaveOnTerminateAndRejoin(t *testing.T) {
	const n = 3
	type node struct{ http, rpc, serf int }
	nodes := make([]node, n)
	var joins []string
	for i := range nodes {
		nodes[i] = node{http: freePort(t), rpc: freePort(t), serf: freePort(t)}
		joins = append(joins, fmt.Sprintf("%q", fmt.Sprintf("127.0.0.1:%d", nodes[i].serf)))
	}
	agents := make([]*agentProc, n)
	for i, nd := range nodes {
		cfg := fmt.Sprintf(`
name               = "server-%d"
data_dir           = %q
bind_addr          = "127.0.0.1"
leave_on_terminate = true
ports {
  http = %d
  rpc  = %d
  serf = %d
}
server {
  enabled          = true
  bootstrap_expect = %d
  encrypt          = %q
  server_join {
    retry_join     = [%s]
    retry_interval = "1s"
  }
}
`, i, t.TempDir(), nd.http, nd.rpc, nd.serf, n, e2eClusterKey, joinList(joins))
		path := filepath.Join(t.TempDir(), "agent.hcl")
		must.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
		agents[i] = startAgentNoWait(t, path, fmt.Sprintf("http://127.0.0.1:%d", nd.http))
	}
	for _, a := range agents {
		a.waitForLeader()
	}
	peersOf := func(a *agentProc) int {
		peers, err := a.client().Status().Peers()
		if err != nil {
			return -1
		}
		return len(peers)
	}
	waitPeers := func(a *agentProc, want int, what string) {
		deadline := time.Now().Add(30 * time.Second)
		for peersOf(a) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: never saw %d peers (have %d)", what, want, peersOf(a))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitPeers(agents[0], n, "formed")

	leaderRPC, err := agents[0].client().Status().Leader()
	must.NoError(t, err)
	var follower, other *agentProc
	followerName := ""
	for i, a := range agents {
		if fmt.Sprintf("127.0.0.1:%d", nodes[i].rpc) == leaderRPC {
			continue
		}
		if follower == nil {
			follower, followerName = a, fmt.Sprintf("server-%d.global", i)
		} else {
			other = a
		}
	}
	must.NoError(t, follower.cmd.Process.Signal(syscall.SIGTERM))
	must.NoError(t, follower.cmd.Wait())
	must.Eq(t, 0, follower.cmd.ProcessState.ExitCode())
	// It left gossip ("left", not "failed") and Raft before it stopped.
	waitPeers(other, n-1, "left")
	members, err := other.client().Agent().Members()
	must.NoError(t, err)
	statuses := map[string]string{}
	for _, m := range members.Members {
		statuses[m.Name] = m.Status
	}
	must.Eq(t, "left", statuses[followerName], must.Sprint(statuses))

	back := startAgentNoWait(t, follower.config, follower.httpURL)
	back.waitForLeader()
	waitPeers(other, n, "rejoined")
}
