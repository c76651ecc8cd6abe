//go:build unix

package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
)

// startOrHang runs start and fails the test if it has not returned after a bound far above
// any start-up: a second agent on a data_dir in use used to wait for ever.
func startOrHang[T any](t *testing.T, start func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- start() }()
	select {
	case v := <-done:
		return v
	case <-time.After(60 * time.Second):
		t.Fatal("the second agent is still starting: it waits on the data_dir instead of failing")
		panic("unreachable")
	}
}

// Security finding (issue 19, item 5): a second agent started on a data_dir in use hung
// silently, ignoring SIGTERM. It must fail at once naming the lock, and the first keep running.
func TestSecurity_SecondAgentOnADataDirInUseFailsFast(t *testing.T) {
	dir := t.TempDir()
	first := NewTestAgent(t, func(c *Config) { c.DataDir = dir })
	lockPath := filepath.Join(dir, dataDirLockFile)

	t.Run("NewAgent", func(t *testing.T) {
		cfg := first.Agent.Config().Copy()
		cfg.Ports.HTTP = 0
		err := startOrHang(t, func() error {
			a, err := NewAgent(cfg, hclog.NewNullLogger())
			if err == nil {
				a.Shutdown()
			}
			return err
		})
		must.ErrorIs(t, err, errDataDirInUse)
		must.StrContains(t, err.Error(), lockPath)
		must.StrContains(t, err.Error(), "pid "+strconv.Itoa(os.Getpid()))
	})

	t.Run("nomad agent exits 1", func(t *testing.T) {
		cfgPath := filepath.Join(t.TempDir(), "ports.hcl")
		must.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf("ports {\n  http = %d\n}\n", freePort(t))), 0o600))
		ui := cli.NewMockUi()
		code := startOrHang(t, func() int { return run([]string{"-dev", "-data-dir", dir, "-config", cfgPath}, ui, nil) })
		must.Eq(t, 1, code)
		must.StrContains(t, ui.ErrorWriter.String(), lockPath)
	})

	// The first agent never noticed.
	c := first.Client("")
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	// Its shutdown releases the lock: the next agent on the data_dir starts.
	first.Agent.Shutdown()
	cfg := first.Agent.Config().Copy()
	cfg.Ports.HTTP = 0
	next, err := NewAgent(cfg, hclog.NewNullLogger())
	must.NoError(t, err)
	next.Shutdown()
}
