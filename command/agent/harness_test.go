package agent

import "testing"

// The in-package twins of agenttest: this package's tests cannot import agenttest (it imports
// this package).

// TestAgent is the in-process agent of this package's tests.
type TestAgent = HarnessAgent

// testLogWriter sends agent logs to the test's log, shown only for failing or -v tests.
type testLogWriter = harnessLogWriter

func NewTestAgent(t testing.TB, cb func(*Config)) *TestAgent {
	t.Helper()
	return StartHarnessAgent(t, cb)
}

func NewTestClientAgent(t testing.TB, cb func(*Config)) *TestAgent {
	t.Helper()
	return StartHarnessClientAgent(t, cb)
}

func NewTestACLAgent(t testing.TB, cb func(*Config)) (*TestAgent, string) {
	t.Helper()
	return StartHarnessACLAgent(t, cb)
}

func KillTasksAtCleanup(t testing.TB, a *Agent) {
	KillHarnessTasksAtCleanup(t, a)
}
