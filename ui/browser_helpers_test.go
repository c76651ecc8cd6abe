//go:build uitest

package ui_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

// newBrowser starts headless Chromium for one test and returns a tab context that ends
// with the test. `make ui-test` needs chromium on the PATH (.ci/run installs it); a missing
// browser fails the suite rather than skipping it, since the suite exists to run it.
func newBrowser(t testing.TB) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	must.NotEq(t, "", path, must.Sprint("no chromium on PATH: apt-get install chromium, or set CHROMIUM"))
	// Not t.TempDir: Chromium may still be writing its profile when the test's cleanup
	// runs, so the directory is removed after the browser is gone, best effort.
	profile, err := os.MkdirTemp("", "nomad-ui-chromium-")
	must.NoError(t, err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc(); _ = os.RemoveAll(profile) })
	must.NoError(t, chromedp.Run(ctx))
	return ctx
}

// run runs browser actions, failing the test with a screenshot kept for the reader.
func run(t testing.TB, ctx context.Context, actions ...chromedp.Action) {
	t.Helper()
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(actx, actions...); err != nil {
		shot(t, ctx, "failure")
		var page string
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = chromedp.Run(dctx, chromedp.Evaluate(`location.href + "\n" + document.body.innerText.slice(0, 3000)`, &page))
		t.Fatalf("browser: %v\npage: %s", err, page)
	}
}

// shot saves a PNG of the page under ui/testdata/screenshots (gitignored) when
// UI_SCREENSHOTS is set, and always on failure.
func shot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	if name != "failure" && os.Getenv("UI_SCREENSHOTS") == "" {
		return
	}
	var png []byte
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(sctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	dir := filepath.Join("testdata", "screenshots")
	_ = os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+"-"+name+".png")
	if err := os.WriteFile(file, png, 0o644); err == nil {
		t.Logf("screenshot: %s", file)
	}
}

// signIn uses the sign-in page as a user would.
func signIn(t *testing.T, ctx context.Context, base, secret string) {
	t.Helper()
	run(t, ctx,
		chromedp.Navigate(base+"/ui/#/token"),
		chromedp.WaitVisible("#token-input", chromedp.ByQuery),
		chromedp.SendKeys("#token-input", secret, chromedp.ByQuery),
		chromedp.Click("#token-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#jobs-table", chromedp.ByQuery),
	)
}

// exists reports whether selector matches anything now.
func exists(t *testing.T, ctx context.Context, selector string) bool {
	t.Helper()
	var ok bool
	run(t, ctx, chromedp.Evaluate(`document.querySelector(`+quote(selector)+`) !== null`, &ok))
	return ok
}

func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func text(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	var s string
	run(t, ctx, chromedp.WaitVisible(selector, chromedp.ByQuery), chromedp.Text(selector, &s, chromedp.ByQuery))
	return s
}

func testJob(id string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("server", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"600"}}
	job.AddTaskGroup(api.NewTaskGroup("web", 1).AddTask(task))
	return job
}

// cluster is an ACL agent with a management client and helpers to mint tokens.
type cluster struct {
	t    *testing.T
	ta   *agenttest.Agent
	mgmt *api.Client
}

func newCluster(t *testing.T) *cluster {
	ta, root := agenttest.NewACLAgent(t, nil)
	return &cluster{t: t, ta: ta, mgmt: ta.Client(root)}
}

func (c *cluster) policy(name, rules string) {
	c.t.Helper()
	_, err := c.mgmt.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: rules}, nil)
	must.NoError(c.t, err)
}

func (c *cluster) token(name string, policies ...string) string {
	c.t.Helper()
	tok, _, err := c.mgmt.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: policies}, nil)
	must.NoError(c.t, err)
	return tok.SecretID
}

func (c *cluster) register(job *api.Job) {
	c.t.Helper()
	_, _, err := c.mgmt.Jobs().Register(job, nil)
	must.NoError(c.t, err)
}
