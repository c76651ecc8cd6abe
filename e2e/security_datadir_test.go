//go:build e2e

package e2e

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// Issue 19, item 5: a second agent started on a data_dir in use hung silently and ignored
// SIGTERM. It must exit non-zero at once, naming the lock and its holder, and the first agent
// must keep serving.
func TestSecurity_E2E_SecondAgentOnADataDirInUseExits(t *testing.T) {
	dir := t.TempDir()
	cfg, url := writeConfig(t, dir, "")
	first := startAgent(t, cfg, url)

	cfg2, url2 := writeConfig(t, dir, "")
	second := startAgentNoWait(t, cfg2, url2)
	exited := make(chan error, 1)
	go func() { exited <- second.cmd.Wait() }()
	select {
	case err := <-exited:
		must.Error(t, err, must.Sprint("the second agent exited 0"))
	case <-time.After(60 * time.Second):
		_ = second.cmd.Process.Kill()
		<-exited
		t.Fatalf("the second agent is still running on a data_dir in use:\n%s", second.logs.String())
	}
	out := second.logs.String()
	must.StrContains(t, out, filepath.Join(dir, "agent.lock"))
	must.StrContains(t, out, "pid "+strconv.Itoa(first.cmd.Process.Pid))

	_, _, err := first.client().Jobs().Register(testJob("still-here"), nil)
	must.NoError(t, err)
}
