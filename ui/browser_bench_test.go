//go:build uitest

package ui_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

// BenchmarkUI_JobsPage5000 loads the jobs page of an agent holding 5,000 jobs in headless
// Chromium and reports the time from navigation start until the list is in the page (its
// first page of rows and the count of all 5,000) and a frame has been drawn after it
// (ms/render). `make ui-bench` runs it.
func BenchmarkUI_JobsPage5000(b *testing.B) {
	const jobs = 5000
	ta := agenttest.NewAgent(b, nil)
	c := ta.Client("")
	var wg sync.WaitGroup
	errs := make(chan error, jobs)
	ids := make(chan int)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				if _, _, err := c.Jobs().Register(testJob(fmt.Sprintf("job-%05d", i)), nil); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < jobs; i++ {
		ids <- i
	}
	close(ids)
	wg.Wait()
	close(errs)
	for err := range errs {
		must.NoError(b, err)
	}

	ctx := newBrowser(b)
	const rendered = `new Promise((resolve) => {
  const check = () => {
    const count = document.querySelector("#jobs-count");
    if (count && count.textContent.startsWith("5000 of 5000") && document.querySelectorAll("#jobs tbody tr").length > 0) {
      requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())));
    } else {
      requestAnimationFrame(check);
    }
  };
  check();
})`
	awaitPromise := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	var total float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ms float64
		run(b, ctx,
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(ta.URL()+"/ui/#/jobs"),
			chromedp.Evaluate(rendered, &ms, awaitPromise),
		)
		total += ms
	}
	b.ReportMetric(total/float64(b.N), "ms/render")
	var rows int
	run(b, ctx, chromedp.Evaluate(`document.querySelectorAll("#jobs tbody tr").length`, &rows))
	must.Eq(b, 100, rows)
}

// TestUI_JobsPages: a long list is shown a page at a time, and the pager walks it.
func TestUI_JobsPages(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	c := ta.Client("")
	for i := 0; i < 230; i++ {
		_, _, err := c.Jobs().Register(testJob(fmt.Sprintf("job-%03d", i)), nil)
		must.NoError(t, err)
	}
	ctx := newBrowser(t)
	firstRow := func() string {
		var id string
		run(t, ctx, chromedp.Evaluate(`document.querySelector("#jobs tbody tr").dataset.job`, &id))
		return id
	}
	rows := func() int {
		var n int
		run(t, ctx, chromedp.Evaluate(`document.querySelectorAll("#jobs tbody tr").length`, &n))
		return n
	}
	run(t, ctx, chromedp.Navigate(ta.URL()+"/ui/#/jobs"), chromedp.WaitVisible("#jobs-next", chromedp.ByQuery))
	must.Eq(t, "230 of 230 jobs", text(t, ctx, "#jobs-count"))
	must.Eq(t, 100, rows())
	must.Eq(t, "job-000", firstRow())
	run(t, ctx, chromedp.Click("#jobs-next", chromedp.ByQuery), chromedp.WaitVisible(`tr[data-job="job-100"]`, chromedp.ByQuery))
	run(t, ctx, chromedp.Click("#jobs-next", chromedp.ByQuery), chromedp.WaitVisible(`tr[data-job="job-200"]`, chromedp.ByQuery))
	must.Eq(t, 30, rows())
	must.StrContains(t, text(t, ctx, "#jobs-page"), "201–230 of 230 (page 3 of 3)")
	// The page is in the URL: a reload stays on it.
	run(t, ctx, chromedp.Reload(), chromedp.WaitVisible(`tr[data-job="job-200"]`, chromedp.ByQuery))
	must.Eq(t, "job-200", firstRow())
}
