// Package agenttest starts in-process agents for the tests of other packages. It lives apart
// from package agent so that the nomad binary does not link the testing package.
package agenttest

import (
	"testing"

	"github.com/nomadfork/nomad/command/agent"
)

// Agent is an agent running in the test process: one server with Raft in memory, the HTTP API
// on a free loopback port.
type Agent = agent.HarnessAgent

// NewAgent starts a dev agent on 127.0.0.1 with a free HTTP port, waits until its server leads
// and can commit, and shuts it down when the test ends. cb may change the configuration first.
// It runs no client and no scheduling worker, so evaluations stay pending and a test sees only
// its own writes; NewClientAgent runs both.
func NewAgent(t testing.TB, cb func(*agent.Config)) *Agent {
	t.Helper()
	return agent.StartHarnessAgent(t, cb)
}

// NewClientAgent starts a test agent that runs jobs on its own client (raw_exec and the mock
// driver). It returns once the client's node is registered.
func NewClientAgent(t testing.TB, cb func(*agent.Config)) *Agent {
	t.Helper()
	return agent.StartHarnessClientAgent(t, cb)
}

// NewACLAgent starts a test agent with ACLs enabled and returns it with the secret of a
// bootstrap management token.
func NewACLAgent(t testing.TB, cb func(*agent.Config)) (*Agent, string) {
	t.Helper()
	return agent.StartHarnessACLAgent(t, cb)
}

// KillTasksAtCleanup ends, once the test is over, the tasks an agent with a state directory
// leaves running at shutdown for its next run to re-attach to.
func KillTasksAtCleanup(t testing.TB, a *agent.Agent) {
	agent.KillHarnessTasksAtCleanup(t, a)
}

// NewServers starts n server agents (server-0 …) that joined each other over gossip and Raft;
// the first leads. cb may change each configuration (i is its index) first.
func NewServers(t testing.TB, n int, cb func(i int, cfg *agent.Config)) []*Agent {
	t.Helper()
	return agent.StartHarnessServers(t, n, cb)
}
