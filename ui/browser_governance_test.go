//go:build uitest

package ui_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

const (
	developerRules = `namespace "default" {
  policy       = "read"
  capabilities = ["submit-job"]
}`
	operatorRules = `namespace "default" {
  policy = "write"
}`
)

// TestUI_DeveloperSeesStopButNotPurge: submit-job lets a token stop a job, never purge it,
// and the page offers exactly what the server would allow.
func TestUI_DeveloperSeesStopButNotPurge(t *testing.T) {
	c := newCluster(t)
	c.policy("developer", developerRules)
	dev := c.token("dev-alice", "developer")
	c.register(testJob("web"))

	ctx := newBrowser(t)
	base := c.ta.URL()
	signIn(t, ctx, base, dev)
	run(t, ctx,
		chromedp.WaitVisible(`tr[data-job="web"]`, chromedp.ByQuery),
		chromedp.Navigate(base+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#job-stop", chromedp.ByQuery),
		chromedp.WaitVisible("#groups", chromedp.ByQuery),
	)
	shot(t, ctx, "job")
	must.False(t, exists(t, ctx, "#job-purge"))
	must.StrContains(t, text(t, ctx, "#whoami"), "dev-alice")

	// Stop works for the developer.
	run(t, ctx, chromedp.Click("#job-stop", chromedp.ByQuery), chromedp.WaitVisible("#action-ok", chromedp.ByQuery))
	job, _, err := c.mgmt.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.True(t, *job.Stop)
}

// TestUI_OperatorPurgesAndHistoryShowsActor: an operator sees both buttons; purging removes
// the job, the purge history names the operator, and Restore brings the job back. The live
// events page, open in a second tab, shows the purge with its actor.
func TestUI_OperatorPurgesAndHistoryShowsActor(t *testing.T) {
	c := newCluster(t)
	c.policy("operator", operatorRules)
	ops := c.token("ops-bob", "operator")
	c.register(testJob("web"))

	ctx := newBrowser(t)
	base := c.ta.URL()
	signIn(t, ctx, base, ops)

	// The events page in a second browser, signed in as the same operator.
	evCtx := newBrowser(t)
	signIn(t, evCtx, base, ops)
	run(t, evCtx, chromedp.Navigate(base+"/ui/#/events?topic=Job"), chromedp.WaitVisible("#events-status", chromedp.ByQuery))
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		var s string
		_ = chromedp.Run(evCtx, chromedp.Text("#events-status", &s, chromedp.ByQuery))
		return s != "Connecting…"
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	must.StrContains(t, text(t, evCtx, "#events-status"), "Connected")

	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#job-stop", chromedp.ByQuery),
		chromedp.WaitVisible("#job-purge", chromedp.ByQuery),
	)
	must.False(t, exists(t, ctx, "#job-purge-confirm:not([hidden])"))
	run(t, ctx,
		chromedp.Click("#job-purge", chromedp.ByQuery),
		chromedp.WaitVisible("#job-purge-confirm", chromedp.ByQuery),
		chromedp.Click("#job-purge-confirm", chromedp.ByQuery),
		chromedp.WaitVisible("#action-ok", chromedp.ByQuery),
	)
	must.StrContains(t, text(t, ctx, "#action-ok"), "purged")
	_, _, err := c.mgmt.Jobs().Info("web", nil)
	must.ErrorContains(t, err, "404")

	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/purged"),
		chromedp.WaitVisible(`tr[data-job="web"] td.actor`, chromedp.ByQuery),
	)
	shot(t, ctx, "purged")
	must.StrContains(t, text(t, ctx, `tr[data-job="web"] td.actor`), "ops-bob")

	run(t, evCtx, chromedp.WaitVisible(`tr.purge[data-key="web"] td.actor`, chromedp.ByQuery))
	shot(t, evCtx, "events")
	must.StrContains(t, text(t, evCtx, `tr.purge[data-key="web"] td.actor`), "ops-bob")

	run(t, ctx,
		chromedp.Click(`tr[data-job="web"] button.restore`, chromedp.ByQuery),
		chromedp.WaitVisible("#restore-ok", chromedp.ByQuery),
	)
	job, _, err := c.mgmt.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.EqOp(t, "web", *job.ID)
}

// TestUI_StaleButtonShowsServerRefusal: the buttons reflect the permissions when the page
// was drawn; when the policy loses purge-job meanwhile, the click gets the server's 403
// and the page shows its text instead of pretending.
func TestUI_StaleButtonShowsServerRefusal(t *testing.T) {
	c := newCluster(t)
	c.policy("operator", operatorRules)
	ops := c.token("ops-carol", "operator")
	c.register(testJob("web"))

	ctx := newBrowser(t)
	base := c.ta.URL()
	signIn(t, ctx, base, ops)
	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#job-purge", chromedp.ByQuery),
		chromedp.Click("#job-purge", chromedp.ByQuery),
		chromedp.WaitVisible("#job-purge-confirm", chromedp.ByQuery),
	)
	c.policy("operator", developerRules)
	run(t, ctx,
		chromedp.Click("#job-purge-confirm", chromedp.ByQuery),
		chromedp.WaitVisible("#action-result .error", chromedp.ByQuery),
	)
	shot(t, ctx, "refused")
	msg := text(t, ctx, "#action-result .error")
	must.StrContains(t, msg, "403")
	must.StrContains(t, msg, "Permission denied")
	must.StrContains(t, msg, "purge-job")
	_, _, err := c.mgmt.Jobs().Info("web", nil)
	must.NoError(t, err)

	// Drawn again, the page no longer offers Purge.
	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/jobs"),
		chromedp.WaitVisible("#jobs-table", chromedp.ByQuery),
		chromedp.Navigate(base+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#job-stop", chromedp.ByQuery),
	)
	must.False(t, exists(t, ctx, "#job-purge"))
}

// TestSecurity_UIRendersAttackerStringsAsText: a job whose name and meta hold markup is
// shown as that text; no element or script from it reaches the page.
func TestSecurity_UIRendersAttackerStringsAsText(t *testing.T) {
	c := newCluster(t)
	c.policy("operator", operatorRules)
	ops := c.token("ops-dan", "operator")
	job := testJob("web")
	evil := `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`
	job.Name = &evil
	job.Meta = map[string]string{"owner": evil}
	c.register(job)

	ctx := newBrowser(t)
	base := c.ta.URL()
	signIn(t, ctx, base, ops)
	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#job-head dl", chromedp.ByQuery),
	)
	must.StrContains(t, text(t, ctx, "#job-head"), evil)
	var pwned bool
	run(t, ctx, chromedp.Evaluate(`window.__pwned !== undefined || document.querySelector("main img, main script") !== null`, &pwned))
	must.False(t, pwned)
}

// TestUI_TokenWithoutRightsSees403Text: the page shows the server's refusal, not a broken page.
func TestUI_TokenWithoutRightsSees403Text(t *testing.T) {
	c := newCluster(t)
	c.policy("nothing", `node { policy = "read" }`)
	tok := c.token("nobody", "nothing")
	c.register(testJob("web"))

	ctx := newBrowser(t)
	base := c.ta.URL()
	signIn(t, ctx, base, tok)
	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#job-head .error", chromedp.ByQuery),
	)
	must.StrContains(t, text(t, ctx, "#job-head .error"), "Permission denied")
	must.True(t, exists(t, ctx, "#job-no-actions"))
	_ = api.ACLToken{}
}
