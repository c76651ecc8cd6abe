//go:build uitest

package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/command/agent"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestUI_ExecTerminal opens a terminal on a running raw_exec task from the allocation page:
// the shell gets a real TTY (its own `tty` answers a device, and the size the page sent), what
// is typed is echoed by the shell itself, and the exit code is shown when it ends.
func TestUI_ExecTerminal(t *testing.T) {
	ta, root := agenttest.NewACLAgent(t, func(cfg *agent.Config) {
		cfg.Client.Enabled = true
		cfg.Server.NumSchedulers = 1
		cfg.Plugins = append(cfg.Plugins, &agent.PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	})
	select {
	case <-ta.Agent.Client().Registered():
	case <-time.After(20 * time.Second):
		t.Fatal("the agent's client never registered")
	}
	c := &cluster{t: t, ta: ta, mgmt: ta.Client(root)}
	// raw_exec has no isolation, so exec into it takes alloc-node-exec, which write lacks.
	c.policy("operator", `namespace "*" {
  policy       = "write"
  capabilities = ["alloc-node-exec"]
}
node { policy = "read" }`)
	op := c.token("ops-olga", "operator")
	c.register(testJob("shell"))
	var allocID string
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs, _, err := c.mgmt.Jobs().Allocations("shell", false, nil)
		if err != nil || len(allocs) == 0 || allocs[0].ClientStatus != api.AllocClientStatusRunning {
			return false
		}
		allocID = allocs[0].ID
		return true
	}), wait.Timeout(30*time.Second), wait.Gap(100*time.Millisecond)))

	ctx := newBrowser(t)
	base := c.ta.URL()
	signIn(t, ctx, base, op)
	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/allocations/"+allocID),
		chromedp.WaitVisible("#exec-start", chromedp.ByQuery),
		chromedp.Click("#exec-start", chromedp.ByQuery),
		chromedp.WaitVisible("#exec-terminal", chromedp.ByQuery),
	)
	screen := func() string {
		var s string
		run(t, ctx, chromedp.Evaluate(`document.querySelector("#exec-terminal").innerText`, &s))
		return s
	}
	waitScreen := func(want string) {
		t.Helper()
		must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
			return strings.Contains(screen(), want)
		}), wait.Timeout(15*time.Second), wait.Gap(100*time.Millisecond)), must.Sprintf("terminal never showed %q; it shows:\n%s", want, screen()))
	}
	// Keys go to the focused terminal; the shell echoes them and answers.
	run(t, ctx, chromedp.SendKeys("#exec-terminal", "tty; stty size; echo sum=$((6*7))"+kb.Enter, chromedp.ByQuery))
	waitScreen("sum=42")
	s := screen()
	must.StrContains(t, s, "/dev/pts/")
	must.StrContains(t, s, "echo sum=$((6*7))") // the shell's own echo, not a local copy
	shot(t, ctx, "terminal")
	run(t, ctx, chromedp.SendKeys("#exec-terminal", "exit 3"+kb.Enter, chromedp.ByQuery))
	waitScreen("[exited with code 3]")
}
