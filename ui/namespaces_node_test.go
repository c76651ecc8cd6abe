package ui

import (
	"os/exec"
	"testing"
)

// TestSecurity_UINamespacesShowDriverSettings runs the namespaces page's test under node
// (testdata/namespaces_test.mjs) so that `make security`, which runs no browser, covers what
// the UI shows of a namespace's task driver and network mode lists: an operator who keeps
// raw_exec out of a namespace must see it kept out. node is what `make ui-test` needs too;
// without it the test is skipped, saying so.
func TestSecurity_UINamespacesShowDriverSettings(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; `make ui-test` needs it too")
	}
	out, err := exec.Command(node, "--test", "testdata/namespaces_test.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test testdata/namespaces_test.mjs: %v\n%s", err, out)
	}
}
