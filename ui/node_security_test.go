package ui

import (
	"os/exec"
	"testing"
)

// The UI's security-relevant displays are tested under node (testdata/*_test.mjs, with a DOM
// just large enough for dom.js) so that `make security`, which runs no browser, covers them.
// node is what `make ui-test` needs too; without it these tests are skipped, saying so.
func runNodeTest(t *testing.T, file string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; `make ui-test` needs it too")
	}
	out, err := exec.Command(node, "--test", file).CombinedOutput()
	if err != nil {
		t.Fatalf("node --test %s: %v\n%s", file, err, out)
	}
}

// An operator who keeps raw_exec out of a namespace must see it kept out: the namespaces page
// shows the task driver and network mode lists as the server applies them.
func TestSecurity_UINamespacesShowDriverSettings(t *testing.T) {
	runNodeTest(t, "testdata/namespaces_test.mjs")
}

// The purge history and events pages name, for a workload identity, its allocation and the
// token on whose behalf it acted.
func TestSecurity_UIActorNamesOnBehalfOf(t *testing.T) {
	runNodeTest(t, "testdata/actor_test.mjs")
}
