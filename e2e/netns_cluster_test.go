//go:build e2e && e2ecluster

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Ports every lab host uses: each host has its own address, so they need not differ.
const (
	labHTTP = 4646
	labRPC  = 4647
	labSerf = 4648
)

// labJoinPort is the port of the addresses servers join (retry_join): the serf port, as upstream.
const labJoinPort = labSerf

// labCluster is three servers and two client-only agents, each on its own host, with mutual
// TLS on HTTP and RPC.
type labCluster struct {
	t       *testing.T
	lab     *netLab
	tls     tlsFiles
	servers []*labHost
	clients []*labHost
	agents  map[string]*agentProc
	// apis are the API clients by host, made once: a client per call would leave an idle
	// connection each, and the agents cap connections per address
	// (limits.http_max_conns_per_client).
	apisMu sync.Mutex
	apis   map[string]*api.Client
}

func (c *labCluster) serverConfig(h *labHost, tls tlsFiles) string {
	var joins []string
	for _, s := range c.servers {
		if s != h {
			joins = append(joins, fmt.Sprintf("%q", fmt.Sprintf("%s:%d", s.ip, labJoinPort)))
		}
	}
	return fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = %q
log_level = "DEBUG"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
server {
  enabled          = true
  bootstrap_expect = 3
  retry_join       = [%s]
  encrypt          = %q
  heartbeat_grace  = "4s"
}
tls {
  http                   = true
  rpc                    = true
  ca_file                = %q
  cert_file              = %q
  key_file               = %q
  verify_server_hostname = true
  verify_https_client    = true
}
`, h.name, c.t.TempDir(), h.ip, labHTTP, labRPC, labSerf, strings.Join(joins, ", "), e2eClusterKey,
		tls.path("nomad-agent-ca.pem"), tls.path("global-server-nomad.pem"), tls.path("global-server-nomad-key.pem"))
}

// clientConfig is a client-only agent's; withTLS false leaves out the tls block entirely.
func (c *labCluster) clientConfig(h *labHost, withTLS bool) string {
	var servers []string
	for _, s := range c.servers {
		servers = append(servers, fmt.Sprintf("%q", fmt.Sprintf("%s:%d", s.ip, labRPC)))
	}
	tlsBlock := ""
	if withTLS {
		tlsBlock = fmt.Sprintf(`
tls {
  http                   = true
  rpc                    = true
  ca_file                = %q
  cert_file              = %q
  key_file               = %q
  verify_server_hostname = true
  verify_https_client    = true
}
`, c.tls.path("nomad-agent-ca.pem"), c.tls.path("global-client-nomad.pem"), c.tls.path("global-client-nomad-key.pem"))
	}
	return fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = %q
log_level = "DEBUG"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
client {
  enabled = true
  servers = [%s]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
%s`, h.name, c.t.TempDir(), h.ip, labHTTP, labRPC, labSerf, strings.Join(servers, ", "), tlsBlock)
}

// api is an official client for the agent on h, over HTTPS with the CLI certificate.
func (c *labCluster) api(h *labHost) *api.Client {
	c.t.Helper()
	c.apisMu.Lock()
	defer c.apisMu.Unlock()
	if cl := c.apis[h.name]; cl != nil {
		return cl
	}
	cl, err := api.NewClient(&api.Config{
		Address: fmt.Sprintf("https://%s:%d", h.ip, labHTTP),
		TLSConfig: &api.TLSConfig{
			CACert: c.tls.path("nomad-agent-ca.pem"), ClientCert: c.tls.path("global-cli-nomad.pem"),
			ClientKey: c.tls.path("global-cli-nomad-key.pem"), TLSServerName: "server.global.nomad",
		},
	})
	must.NoError(c.t, err)
	if c.apis == nil {
		c.apis = map[string]*api.Client{}
	}
	c.apis[h.name] = cl
	return cl
}

// leader is the server host that leads, asked of any server that answers.
func (c *labCluster) leader() *labHost {
	c.t.Helper()
	var found *labHost
	waitUntil(c.t, 30*time.Second, "a leader", func() bool {
		for _, s := range c.servers {
			if c.agents[s.name].cmd.ProcessState != nil {
				continue
			}
			addr, err := c.api(s).Status().Leader()
			if err != nil || addr == "" {
				continue
			}
			for _, cand := range c.servers {
				if addr == fmt.Sprintf("%s:%d", cand.ip, labRPC) {
					found = cand
					return true
				}
			}
		}
		return false
	})
	return found
}

// newLabServers starts the three servers alone and waits until they form a cluster.
func newLabServers(t *testing.T) *labCluster {
	lab := newLab(t)
	c := &labCluster{t: t, lab: lab, tls: createTLS(t), agents: map[string]*agentProc{}}
	for i := 1; i <= 3; i++ {
		c.servers = append(c.servers, lab.host(fmt.Sprintf("s%d", i), 10+i))
	}
	for _, s := range c.servers {
		c.agents[s.name] = s.start(c.serverConfig(s, c.tls), "")
	}
	leader := c.leader()
	waitUntil(t, 30*time.Second, "three Raft peers", func() bool {
		peers, err := c.api(leader).Status().Peers()
		return err == nil && len(peers) == 3
	})
	return c
}

func newLabCluster(t *testing.T) *labCluster {
	c := newLabServers(t)
	leader := c.leader()
	for i := 1; i <= 2; i++ {
		c.clients = append(c.clients, c.lab.host(fmt.Sprintf("c%d", i), 20+i))
	}
	for _, h := range c.clients {
		c.agents[h.name] = h.start(c.clientConfig(h, true), "")
	}
	waitUntil(t, 30*time.Second, "both client nodes ready", func() bool {
		return len(c.readyNodes(leader)) == 2
	})
	return c
}

// readyNodes maps the names of ready nodes to their IDs.
func (c *labCluster) readyNodes(via *labHost) map[string]string {
	nodes, _, err := c.api(via).Nodes().List(nil)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, n := range nodes {
		if n.Status == "ready" {
			out[n.Name] = n.ID
		}
	}
	return out
}

func sleepJob(id string, count int) *api.Job {
	job := testJob(id)
	job.TaskGroups[0].Count = &count
	return job
}

// runningAllocs lists the job's running allocations.
func runningAllocs(c *api.Client, jobID string) []*api.AllocationListStub {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return nil
	}
	var out []*api.AllocationListStub
	for _, a := range allocs {
		if a.ClientStatus == "running" {
			out = append(out, a)
		}
	}
	return out
}

// TestNetnsCluster_MutualTLS runs three servers and two client-only agents, each on its own
// host, with mutual TLS everywhere, and checks what operators rely on across hosts.
func TestNetnsCluster_MutualTLS(t *testing.T) {
	c := newLabCluster(t)
	leader := c.leader()
	nodes := c.readyNodes(leader)

	t.Run("a job runs on the remote clients; exec and logs reach them through a server", func(t *testing.T) {
		cl := c.api(leader)
		job := sleepJob("spread", 2)
		job.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", "echo ready on $(hostname -I); exec sleep 600"}}
		job.Constraints = append(job.Constraints, api.NewConstraint("", "distinct_hosts", "true"))
		_, _, err := cl.Jobs().Register(job, nil)
		must.NoError(t, err)
		var allocs []*api.AllocationListStub
		waitUntil(t, 60*time.Second, "two running allocations", func() bool {
			allocs = runningAllocs(cl, "spread")
			return len(allocs) == 2
		})
		must.NotEq(t, allocs[0].NodeID, allocs[1].NodeID)
		for _, stub := range allocs {
			alloc, _, err := cl.Allocations().Info(stub.ID, nil)
			must.NoError(t, err)
			// Through every server: a server that does not hold the client's connection
			// relays to the one that does.
			for _, s := range c.servers {
				var stdout, stderr bytes.Buffer
				start := time.Now()
				code, err := c.api(s).Allocations().Exec(context.Background(), alloc, "server", false,
					[]string{"/bin/sh", "-c", "echo hello from $(hostname -I)"}, strings.NewReader(""), &stdout, &stderr, nil, nil)
				must.NoError(t, err, must.Sprintf("exec through %s", s.name))
				must.Eq(t, 0, code, must.Sprintf("stderr: %s", stderr.String()))
				t.Logf("exec round trip through server %s to node %s: %s", s.name, stub.NodeName, time.Since(start))
				must.StrContains(t, stdout.String(), "hello from 10.231.7.2")
			}

			cancel := make(chan struct{})
			frames, errs := cl.AllocFS().Logs(alloc, false, "server", "stdout", "start", 0, cancel, nil)
			select {
			case f := <-frames:
				must.NotNil(t, f)
				must.StrContains(t, string(f.Data), "ready on 10.231.7.2")
			case err := <-errs:
				t.Fatalf("logs through the server: %v", err)
			case <-time.After(20 * time.Second):
				t.Fatal("no logs through the server")
			}
			close(cancel)
		}
		_, _, err = cl.Jobs().Deregister("spread", true, nil)
		must.NoError(t, err)
	})

	t.Run("writes through a follower and through the leader", func(t *testing.T) {
		leader := c.leader()
		var follower *labHost
		for _, s := range c.servers {
			if s != leader {
				follower = s
				break
			}
		}
		for _, via := range []*labHost{leader, follower} {
			cl := c.api(via)
			const n = 100
			start := time.Now()
			for i := 0; i < n; i++ {
				_, _, err := cl.Jobs().Register(sleepJob(fmt.Sprintf("t-%s-%03d", via.name, i), 0), nil)
				must.NoError(t, err)
			}
			role := "leader"
			if via == follower {
				role = "follower"
			}
			t.Logf("%d sequential writes through the %s %s: %.0f writes/s", n, role, via.name, n/time.Since(start).Seconds())
		}
	})

	t.Run("kill -9 of the leader during 500 acknowledged writes loses none", func(t *testing.T) {
		const total, killAt = 500, 100
		var (
			acked   []string
			killed  time.Time
			firstAt time.Duration
		)
		old := c.leader()
		next := 0
		for len(acked) < total {
			id := fmt.Sprintf("w-%04d", len(acked))
			var err error
			// Any live server takes the write; a follower forwards it to the leader.
			for attempt := 0; attempt < len(c.servers)*40; attempt++ {
				s := c.servers[next%len(c.servers)]
				if c.agents[s.name].cmd.ProcessState != nil {
					next++
					continue
				}
				_, _, err = c.api(s).Jobs().Register(sleepJob(id, 0), nil)
				if err == nil {
					break
				}
				next++
				time.Sleep(50 * time.Millisecond)
			}
			must.NoError(t, err, must.Sprintf("write %s never acknowledged", id))
			acked = append(acked, id)
			if !killed.IsZero() && firstAt == 0 {
				firstAt = time.Since(killed)
			}
			if len(acked) == killAt {
				c.agents[old.name].kill9()
				killed = time.Now()
			}
		}
		t.Logf("leader kill to first acknowledged write: %s", firstAt)
		survivor := c.leader()
		must.NotEq(t, old.name, survivor.name)
		jobs, _, err := c.api(survivor).Jobs().List(nil)
		must.NoError(t, err)
		have := map[string]bool{}
		for _, j := range jobs {
			have[j.ID] = true
		}
		for _, id := range acked {
			must.True(t, have[id], must.Sprintf("acknowledged write %s is lost", id))
		}
	})

	t.Run("a cut client is marked down, its allocation replaced elsewhere, and comes back", func(t *testing.T) {
		leader := c.leader()
		cl := c.api(leader)
		_, _, err := cl.Jobs().Register(sleepJob("moving", 1), nil)
		must.NoError(t, err)
		var first *api.AllocationListStub
		waitUntil(t, 60*time.Second, "the allocation running", func() bool {
			if r := runningAllocs(cl, "moving"); len(r) == 1 {
				first = r[0]
				return true
			}
			return false
		})
		var victim *labHost
		for _, h := range c.clients {
			if h.name == first.NodeName {
				victim = h
			}
		}
		must.NotNil(t, victim)
		victim.cut()
		waitUntil(t, 60*time.Second, "the cut node to be down and its allocation lost", func() bool {
			node, _, err := cl.Nodes().Info(first.NodeID, nil)
			if err != nil || node.Status != "down" {
				return false
			}
			a, _, err := cl.Allocations().Info(first.ID, nil)
			return err == nil && a.ClientStatus == "lost"
		})
		waitUntil(t, 60*time.Second, "a replacement running on the other client", func() bool {
			r := runningAllocs(cl, "moving")
			return len(r) == 1 && r[0].NodeID != first.NodeID
		})
		victim.heal()
		waitUntil(t, 60*time.Second, "the healed node ready again", func() bool {
			node, _, err := cl.Nodes().Info(first.NodeID, nil)
			return err == nil && node.Status == "ready"
		})
	})

	t.Run("a client without a certificate and a server of another CA cannot join", func(t *testing.T) {
		leader := c.leader()
		cl := c.api(leader)
		peersBefore, err := cl.Status().Peers()
		must.NoError(t, err)

		bare := c.lab.host("c3", 23)
		bareAgent := bare.start(c.clientConfig(bare, false), "")
		other := createTLS(t)
		rogue := c.lab.host("s9", 19)
		c.servers = append(c.servers, rogue)
		rogueAgent := rogue.start(c.serverConfig(rogue, other), "")
		c.servers = c.servers[:len(c.servers)-1]

		// Both have tried and been refused: the client's registration fails, the rogue
		// server's handshakes fail on the certificate.
		waitUntil(t, 60*time.Second, "the bare client to be refused", func() bool {
			return strings.Contains(bareAgent.logs.String(), "registering node failed")
		})
		waitUntil(t, 60*time.Second, "the rogue server to be refused", func() bool {
			l := rogueAgent.logs.String()
			return strings.Contains(l, "certificate") || strings.Contains(l, "handshake")
		})
		must.Eq(t, nodes, c.readyNodesAll(leader))
		peersAfter, err := cl.Status().Peers()
		must.NoError(t, err)
		must.Eq(t, peersBefore, peersAfter)
		for _, p := range peersAfter {
			must.False(t, strings.HasPrefix(p, rogue.ip+":"), must.Sprintf("the rogue server became a peer: %v", peersAfter))
		}
	})
}

// readyNodesAll maps the names of every registered node (any status) to their IDs.
func (c *labCluster) readyNodesAll(via *labHost) map[string]string {
	nodes, _, err := c.api(via).Nodes().List(nil)
	must.NoError(c.t, err)
	out := map[string]string{}
	for _, n := range nodes {
		out[n.Name] = n.ID
	}
	return out
}
