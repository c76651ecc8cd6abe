//go:build uitest

package ui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/command/agent"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestUI_DeploymentsAndVariables: the job page lists the job's deployments, and the variables
// page lists paths without ever showing an item.
func TestUI_DeploymentsAndVariables(t *testing.T) {
	ta := agenttest.NewAgent(t, func(c *agent.Config) { c.Server.NumSchedulers = 1 })
	c := ta.Client("")
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		ds, _, err := c.Jobs().Deployments("web", false, nil)
		return err == nil && len(ds) > 0
	}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
	_, _, err = c.Variables().Create(&api.Variable{Namespace: "default", Path: "app/db", Items: api.VariableItems{"pass": "hunter2-secret"}}, nil)
	must.NoError(t, err)

	ctx := newBrowser(t)
	run(t, ctx,
		chromedp.Navigate(ta.URL()+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#deployments tbody tr", chromedp.ByQuery),
	)
	must.StrContains(t, text(t, ctx, "#deployments"), "0") // job version 0
	shot(t, ctx, "job-deployments")

	run(t, ctx,
		chromedp.Navigate(ta.URL()+"/ui/#/variables"),
		chromedp.WaitVisible(`tr[data-variable="default/app/db"]`, chromedp.ByQuery),
	)
	var page string
	run(t, ctx, chromedp.Evaluate(`document.body.innerText`, &page))
	must.StrContains(t, page, "app/db")
	must.StrNotContains(t, page, "hunter2-secret")
	shot(t, ctx, "variables")
}
