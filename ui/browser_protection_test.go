//go:build uitest

package ui_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/shoenig/test/must"
)

// TestUI_ProtectionBadgeAndPurgePlan: a protect-job holder protects a job from the job page
// (an operator, who may purge, is not offered the button); the badge shows the reason; the
// operator's purge confirmation shows the purge plan saying the purge will be refused, and
// the refusal's text when confirmed anyway.
func TestUI_ProtectionBadgeAndPurgePlan(t *testing.T) {
	c := newCluster(t)
	c.policy("operator", operatorRules)
	c.policy("guardian", `namespace "default" { capabilities = ["protect-job", "read-job", "list-jobs"] }`)
	ops := c.token("ops-bob", "operator")
	guard := c.token("gina", "guardian")
	c.register(testJob("web"))
	base := c.ta.URL()

	gctx := newBrowser(t)
	signIn(t, gctx, base, guard)
	run(t, gctx,
		chromedp.Navigate(base+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#job-protect", chromedp.ByQuery),
		chromedp.SendKeys("#job-protect-reason", "billing depends on it", chromedp.ByQuery),
		chromedp.Click("#job-protect", chromedp.ByQuery),
		chromedp.WaitVisible("#job-protected", chromedp.ByQuery),
		chromedp.WaitVisible("#job-unprotect", chromedp.ByQuery),
	)
	must.StrContains(t, text(t, gctx, "#job-protected"), "billing depends on it")
	must.StrContains(t, text(t, gctx, "#job-protected"), "gina")

	ctx := newBrowser(t)
	signIn(t, ctx, base, ops)
	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/jobs/default/web"),
		chromedp.WaitVisible("#job-protected", chromedp.ByQuery),
		chromedp.WaitVisible("#job-purge", chromedp.ByQuery),
	)
	must.False(t, exists(t, ctx, "#job-protect"))
	must.False(t, exists(t, ctx, "#job-unprotect"))
	run(t, ctx,
		chromedp.Click("#job-purge", chromedp.ByQuery),
		chromedp.WaitVisible("#purge-plan-removes", chromedp.ByQuery),
	)
	shot(t, ctx, "purge-plan")
	must.StrContains(t, text(t, ctx, "#purge-plan-protected"), "billing depends on it")
	must.StrContains(t, text(t, ctx, "#purge-plan-removes"), "Versions")
	run(t, ctx,
		chromedp.Click("#job-purge-confirm", chromedp.ByQuery),
		chromedp.WaitVisible("#action-result .error", chromedp.ByQuery),
	)
	must.StrContains(t, text(t, ctx, "#action-result .error"), "protected")
	_, _, err := c.mgmt.Jobs().Info("web", nil)
	must.NoError(t, err)
}
