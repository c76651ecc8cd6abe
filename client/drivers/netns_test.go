package drivers

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// testNetNS is a fresh network namespace (only lo, down) made with iproute2.
func testNetNS(t *testing.T, name string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	return "/var/run/netns/" + name
}

// interfaces lists the interfaces /proc/net/dev names: the reader's network namespace.
const listInterfaces = `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ' '`

// A raw_exec task, and a command run in it, with NetNS set see the namespace's interfaces
// only (here lo), not the host's.
func TestRawExec_NetNS(t *testing.T) {
	ns := testNetNS(t, "nf-drivers-test")
	cfg := taskConfig(t, map[string]any{"command": "/bin/sh", "args": []any{"-c", listInterfaces}})
	cfg.NetNS = ns
	h, err := RawExec{}.Start(cfg)
	must.NoError(t, err)
	res := waitResult(t, h, 5*time.Second)
	must.Eq(t, 0, res.ExitCode)
	out, err := os.ReadFile(cfg.StdoutPath)
	must.NoError(t, err)
	must.Eq(t, "lo ", string(out))

	var stdout syncBuffer
	code, err := RawExec{}.Exec(context.Background(), cfg, &ExecOptions{
		Command: []string{"/bin/sh", "-c", listInterfaces}, Stdout: &stdout, Stderr: io.Discard,
	})
	must.NoError(t, err)
	must.Eq(t, 0, code)
	must.Eq(t, "lo ", stdout.String())

	// Without NetNS, the host's.
	cfg.NetNS = ""
	stdout = syncBuffer{}
	_, err = RawExec{}.Exec(context.Background(), cfg, &ExecOptions{
		Command: []string{"/bin/sh", "-c", listInterfaces}, Stdout: &stdout, Stderr: io.Discard,
	})
	must.NoError(t, err)
	must.NotEq(t, "lo ", stdout.String())
	must.True(t, strings.Contains(stdout.String(), "lo "))
}
