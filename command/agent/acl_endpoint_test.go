package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// aclGoldenKeys are the top-level keys, in order, of upstream Nomad 2.0.5's ACL answers
// (fixtures/upstream-nomad-2.0.5/<name>; for a list, the keys of one element). The fixtures
// live outside the module, so the keys are kept here and TestACLFixtures_GoldenKeys checks
// them against the files whenever the files can be found.
var aclGoldenKeys = map[string][]string{
	"acl-bootstrap.txt":    aclTokenKeys,
	"acl-token-create.txt": aclTokenKeys,
	"acl-token-info.txt":   aclTokenKeys,
	"acl-token-self.txt":   aclTokenKeys,
	"acl-token-list.txt": {
		"AccessorID", "Name", "Type", "Policies", "Roles", "Global", "Hash", "CreateTime",
		"ExpirationTime", "CreateIndex", "ModifyIndex",
	},
	"acl-policy-info.txt": {"Name", "Description", "Rules", "RulesJSON", "JobACL", "Hash", "CreateIndex", "ModifyIndex"},
	"acl-policy-list.txt": {"Name", "Description", "JobACL", "Hash", "CreateIndex", "ModifyIndex"},
}

var aclTokenKeys = []string{
	"ExpirationTTL", "AccessorID", "SecretID", "Name", "Type", "Policies", "Roles", "Global", "Hash",
	"CreateTime", "ExpirationTime", "CreateIndex", "ModifyIndex",
}

// upstreamFixtureDir finds fixtures/upstream-nomad-2.0.5 next to the module or in a parent
// directory (the shared checkout keeps it beside the repository), or in
// $NOMAD_UPSTREAM_FIXTURES; "" when it is nowhere.
func upstreamFixtureDir() string {
	if dir := os.Getenv("NOMAD_UPSTREAM_FIXTURES"); dir != "" {
		return dir
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		for _, cand := range []string{
			filepath.Join(dir, "fixtures", "upstream-nomad-2.0.5"),
			filepath.Join(dir, "shared", "fixtures", "upstream-nomad-2.0.5"),
		} {
			if info, err := os.Stat(cand); err == nil && info.IsDir() {
				return cand
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// fixtureBody returns the response body of a fixture: everything after the first blank line.
func fixtureBody(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	must.NoError(t, err)
	_, body, ok := strings.Cut(string(raw), "\n\n")
	must.True(t, ok, must.Sprintf("%s has no blank line before its body", path))
	return body
}

// jsonKeys returns the top-level keys of a JSON object, or of the first element of a JSON
// array of objects, in document order.
func jsonKeys(t *testing.T, body string) []string {
	t.Helper()
	body = strings.TrimSpace(body)
	if strings.HasPrefix(body, "[") {
		var list []json.RawMessage
		must.NoError(t, json.Unmarshal([]byte(body), &list))
		must.SliceNotEmpty(t, list, must.Sprint("an empty list has no keys to compare"))
		body = string(list[0])
	}
	return topLevelKeys(t, body)
}

func TestACLFixtures_GoldenKeys(t *testing.T) {
	dir := upstreamFixtureDir()
	if dir == "" {
		t.Fatal("upstream fixtures not found: they live in fixtures/upstream-nomad-2.0.5 at the repository root (or set NOMAD_UPSTREAM_FIXTURES)")
	}
	for name, want := range aclGoldenKeys {
		t.Run(name, func(t *testing.T) {
			must.Eq(t, want, jsonKeys(t, fixtureBody(t, filepath.Join(dir, name))))
		})
	}
}

// logCapture keeps everything an agent logs, to check that secrets never reach the logs.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// newLoggedACLAgent is NewTestACLAgent with every log line, down to TRACE, also kept in the
// returned capture.
func newLoggedACLAgent(t *testing.T, cb func(*Config)) (*TestAgent, string, *logCapture) {
	t.Helper()
	cfg := DevConfig()
	cfg.Name = "test-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	cfg.BindAddr = "127.0.0.1"
	cfg.Ports.HTTP = 0
	cfg.Client.Enabled = false
	// No scheduling worker, as NewTestAgent: with no node it would still complete each
	// evaluation in the background, and a test that checks a refused request changed nothing
	// must see only its own writes.
	cfg.Server.NumSchedulers = 0
	cfg.ACL.Enabled = true
	if cb != nil {
		cb(cfg)
	}
	logs := &logCapture{}
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:   "agent",
		Level:  hclog.Trace,
		Output: logs,
	})
	a, err := NewAgent(cfg, logger)
	must.NoError(t, err)
	t.Cleanup(a.Shutdown)
	ta := &TestAgent{t: t, Agent: a}
	waitUntil(t, 10*time.Second, "the test agent to lead", func() bool { return ta.Server().LeaderReady() })

	token, _, err := ta.Client("").ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	return ta, token.SecretID, logs
}

// waitUntil polls cond until it holds, failing the test after timeout.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-tick.C:
		}
	}
}

// tokenHeader sends secret as X-Nomad-Token; "" sends no token.
func tokenHeader(secret string) http.Header {
	if secret == "" {
		return nil
	}
	return http.Header{"X-Nomad-Token": {secret}}
}

func mustUpsertPolicy(t *testing.T, c *api.Client, name, rules string) {
	t.Helper()
	_, err := c.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: rules}, nil)
	must.NoError(t, err)
}

func mustCreateToken(t *testing.T, c *api.Client, name string, policies ...string) *api.ACLToken {
	t.Helper()
	tok, _, err := c.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: policies}, nil)
	must.NoError(t, err)
	return tok
}

var resetIndexRe = regexp.MustCompile(`^ACL bootstrap already done \(reset index: (\d+)\)$`)

// bootstrapRefused asserts that a bootstrap was refused as upstream refuses it and returns
// the reset index named in the answer.
func bootstrapRefused(t *testing.T, err error) uint64 {
	t.Helper()
	status, body := responseError(t, err)
	must.Eq(t, 400, status)
	m := resetIndexRe.FindStringSubmatch(body)
	must.SliceLen(t, 2, m, must.Sprintf("unexpected body %q", body))
	n, perr := strconv.ParseUint(m[1], 10, 64)
	must.NoError(t, perr)
	return n
}

func TestACLEndpoint_Bootstrap(t *testing.T) {
	dataDir := t.TempDir()
	ta := NewTestAgent(t, func(c *Config) {
		c.ACL.Enabled = true
		c.DataDir = dataDir
	})
	tokens := ta.Client("").ACLTokens()
	resetFile := filepath.Join(dataDir, "acl-bootstrap-reset")

	first, wm, err := tokens.Bootstrap(nil)
	must.NoError(t, err)
	must.Eq(t, "Bootstrap Token", first.Name)
	must.Eq(t, "management", first.Type)
	must.True(t, first.Global)
	must.SliceEmpty(t, first.Policies)
	must.NotEq(t, "", first.AccessorID)
	must.NotEq(t, "", first.SecretID)
	must.Positive(t, wm.LastIndex)

	self, _, err := ta.Client(first.SecretID).ACLTokens().Self(nil)
	must.NoError(t, err)
	must.Eq(t, first.AccessorID, self.AccessorID)

	_, _, err = tokens.Bootstrap(nil)
	resetIndex := bootstrapRefused(t, err)
	must.Eq(t, wm.LastIndex, resetIndex)

	cases := []struct {
		name    string
		content string
	}{
		{name: "no reset file"},
		{name: "another index", content: strconv.FormatUint(resetIndex+100, 10)},
		{name: "not a number", content: "yes please"},
		{name: "empty", content: "\n"},
	}
	for _, tc := range cases {
		t.Run("refused with "+tc.name, func(t *testing.T) {
			if tc.content != "" {
				must.NoError(t, os.WriteFile(resetFile, []byte(tc.content), 0o600))
			}
			before := ta.Server().State().LatestIndex()
			_, _, err := tokens.Bootstrap(nil)
			must.Eq(t, resetIndex, bootstrapRefused(t, err))
			must.Eq(t, before, ta.Server().State().LatestIndex())
		})
	}

	// The operator copies the reset index into the data dir: bootstrap works once more, here
	// with a chosen secret and through the raw API, to compare its shape with upstream's.
	must.NoError(t, os.WriteFile(resetFile, []byte(strconv.FormatUint(resetIndex, 10)+"\n"), 0o600))
	const chosen = "6f1b7a3e-2c4d-4e5f-8a9b-0c1d2e3f4a5b"
	res := doHTTP(t, ta, "POST", "/v1/acl/bootstrap", strings.NewReader(`{"BootstrapSecret":"`+chosen+`"}`), nil)
	must.Eq(t, 200, res.status, must.Sprint(res.body))
	must.Eq(t, aclGoldenKeys["acl-bootstrap.txt"], jsonKeys(t, res.body))
	var second api.ACLToken
	must.NoError(t, json.Unmarshal([]byte(res.body), &second))
	must.Eq(t, "Bootstrap Token", second.Name)
	must.Eq(t, "management", second.Type)
	must.True(t, second.Global)
	must.Eq(t, chosen, second.SecretID)
	must.NotEq(t, first.AccessorID, second.AccessorID)
	secondIndex, err := strconv.ParseUint(res.header.Get("X-Nomad-Index"), 10, 64)
	must.NoError(t, err)
	must.Greater(t, resetIndex, secondIndex)

	// The file still names the old index, so it allows nothing more.
	_, _, err = tokens.Bootstrap(nil)
	must.Eq(t, secondIndex, bootstrapRefused(t, err))

	// Both management tokens stay valid.
	for _, secret := range []string{first.SecretID, chosen} {
		_, _, err := ta.Client(secret).ACLTokens().List(nil)
		must.NoError(t, err)
	}
}

func TestACLEndpoint_BootstrapWithACLsDisabled(t *testing.T) {
	ta := NewTestAgent(t, nil)
	_, _, err := ta.Client("").ACLTokens().Bootstrap(nil)
	status, body := responseError(t, err)
	must.Eq(t, 400, status)
	must.StrContains(t, body, structs.ErrACLDisabled.Error())
}

const deployerRules = `namespace "default" { capabilities = ["list-jobs","read-job","submit-job","scale-job"] }`

func TestACLEndpoint_Policies(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	policies := c.ACLPolicies()

	wm, err := policies.Upsert(&api.ACLPolicy{Name: "deployer", Description: "view, run, stop, scale", Rules: deployerRules}, nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)

	t.Run("info", func(t *testing.T) {
		p, qm, err := policies.Info("deployer", nil)
		must.NoError(t, err)
		must.Eq(t, "deployer", p.Name)
		must.Eq(t, "view, run, stop, scale", p.Description)
		must.Eq(t, deployerRules, p.Rules)
		must.Eq(t, wm.LastIndex, p.CreateIndex)
		must.Eq(t, wm.LastIndex, p.ModifyIndex)
		must.Eq(t, wm.LastIndex, qm.LastIndex)

		res := doHTTP(t, ta, "GET", "/v1/acl/policy/deployer", nil, tokenHeader(root))
		must.Eq(t, 200, res.status, must.Sprint(res.body))
		must.Eq(t, aclGoldenKeys["acl-policy-info.txt"], jsonKeys(t, res.body))
	})

	t.Run("list", func(t *testing.T) {
		list, _, err := policies.List(nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, list)
		must.Eq(t, "deployer", list[0].Name)
		must.Eq(t, "view, run, stop, scale", list[0].Description)

		res := doHTTP(t, ta, "GET", "/v1/acl/policies", nil, tokenHeader(root))
		must.Eq(t, 200, res.status, must.Sprint(res.body))
		must.Eq(t, aclGoldenKeys["acl-policy-list.txt"], jsonKeys(t, res.body))
	})

	t.Run("update keeps the create index", func(t *testing.T) {
		wm2, err := policies.Upsert(&api.ACLPolicy{Name: "deployer", Description: "changed", Rules: deployerRules}, nil)
		must.NoError(t, err)
		p, _, err := policies.Info("deployer", nil)
		must.NoError(t, err)
		must.Eq(t, "changed", p.Description)
		must.Eq(t, wm.LastIndex, p.CreateIndex)
		must.Eq(t, wm2.LastIndex, p.ModifyIndex)
	})

	t.Run("a holder reads its policy, others may not", func(t *testing.T) {
		mustUpsertPolicy(t, c, "other", `namespace "other" { policy = "read" }`)
		holder := mustCreateToken(t, c, "holder", "deployer")
		hc := ta.Client(holder.SecretID)

		p, _, err := hc.ACLPolicies().Info("deployer", nil)
		must.NoError(t, err)
		must.Eq(t, "deployer", p.Name)
		_, _, err = hc.ACLPolicies().Info("other", nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		must.StrHasPrefix(t, "Permission denied", body)

		// A client token lists the policies it holds, no others.
		list, _, err := hc.ACLPolicies().List(nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, list)
		must.Eq(t, "deployer", list[0].Name)

		_, err = hc.ACLPolicies().Upsert(&api.ACLPolicy{Name: "mine", Rules: deployerRules}, nil)
		status, _ = responseError(t, err)
		must.Eq(t, 403, status)
		_, err = hc.ACLPolicies().Delete("other", nil)
		status, _ = responseError(t, err)
		must.Eq(t, 403, status)
	})

	invalid := []struct {
		name     string
		path     string
		body     string
		wantBody []string
	}{
		{
			name: "unknown capability", path: "/v1/acl/policy/bad",
			body:     `{"Name":"bad","Rules":"namespace \"default\" { capabilities = [\"fly\"] }"}`,
			wantBody: []string{"policy 0 invalid", "Invalid namespace capability", "fly"},
		},
		{
			name: "unknown disposition", path: "/v1/acl/policy/bad",
			body:     `{"Name":"bad","Rules":"namespace \"default\" { policy = \"soar\" }"}`,
			wantBody: []string{"soar"},
		},
		{
			name: "not HCL", path: "/v1/acl/policy/bad",
			body:     `{"Name":"bad","Rules":"namespace \"default\" {"}`,
			wantBody: []string{"policy 0 invalid"},
		},
		{
			name: "no rules", path: "/v1/acl/policy/bad",
			body:     `{"Name":"bad","Rules":""}`,
			wantBody: []string{"policy 0 invalid"},
		},
		{
			name: "name differs from path", path: "/v1/acl/policy/bad",
			body:     `{"Name":"good","Rules":"namespace \"default\" { policy = \"read\" }"}`,
			wantBody: []string{"does not match"},
		},
		{
			name: "invalid name", path: "/v1/acl/policy/b%20ad",
			body:     `{"Rules":"namespace \"default\" { policy = \"read\" }"}`,
			wantBody: []string{"invalid name"},
		},
	}
	for _, tc := range invalid {
		t.Run("invalid: "+tc.name, func(t *testing.T) {
			before := ta.Server().State().LatestIndex()
			res := doHTTP(t, ta, "POST", tc.path, strings.NewReader(tc.body), tokenHeader(root))
			must.Eq(t, 400, res.status, must.Sprint(res.body))
			for _, want := range tc.wantBody {
				must.StrContains(t, res.body, want)
			}
			must.StrNotContains(t, res.body, root)
			must.Eq(t, before, ta.Server().State().LatestIndex())
		})
	}

	t.Run("invalid through the client", func(t *testing.T) {
		_, err := policies.Upsert(&api.ACLPolicy{Name: "bad", Rules: `namespace "default" { capabilities = ["fly"] }`}, nil)
		status, body := responseError(t, err)
		must.Eq(t, 400, status)
		must.StrContains(t, body, "fly")
		_, _, err = policies.Info("bad", nil)
		status, _ = responseError(t, err)
		must.Eq(t, 404, status)
	})

	t.Run("delete", func(t *testing.T) {
		_, err := policies.Delete("deployer", nil)
		must.NoError(t, err)
		_, _, err = policies.Info("deployer", nil)
		status, body := responseError(t, err)
		must.Eq(t, 404, status)
		must.Eq(t, "ACL policy not found", body)
		list, _, err := policies.List(nil)
		must.NoError(t, err)
		for _, p := range list {
			must.NotEq(t, "deployer", p.Name)
		}
		_, err = policies.Delete("deployer", nil)
		status, _ = responseError(t, err)
		must.Eq(t, 404, status)
	})
}

func TestACLEndpoint_Tokens(t *testing.T) {
	ta, root, logs := newLoggedACLAgent(t, nil)
	c := ta.Client(root)
	tokens := c.ACLTokens()
	mustUpsertPolicy(t, c, "deployer", deployerRules)
	mustUpsertPolicy(t, c, "reader", `namespace "default" { policy = "read" }`)

	// Every secret that travels in this test; none may show up in an error body or a log.
	const unknownSecret = "0b7c8f2e-5d3a-4f1b-9e6c-7a8d9b0c1e2f"
	secrets := []string{root, unknownSecret}
	var denied []string // bodies of every refusal

	dev, wm, err := tokens.Create(&api.ACLToken{Name: "dev", Type: "client", Policies: []string{"deployer"}}, nil)
	must.NoError(t, err)
	secrets = append(secrets, dev.SecretID)
	must.Eq(t, "dev", dev.Name)
	must.Eq(t, "client", dev.Type)
	must.Eq(t, []string{"deployer"}, dev.Policies)
	must.False(t, dev.Global)
	must.NotEq(t, "", dev.AccessorID)
	must.NotEq(t, "", dev.SecretID)
	must.Nil(t, dev.ExpirationTime)
	must.Eq(t, wm.LastIndex, dev.CreateIndex)
	must.False(t, dev.CreateTime.IsZero())

	t.Run("create shape", func(t *testing.T) {
		res := doHTTP(t, ta, "POST", "/v1/acl/token",
			strings.NewReader(`{"Name":"raw","Type":"client","Policies":["deployer"]}`), tokenHeader(root))
		must.Eq(t, 200, res.status, must.Sprint(res.body))
		must.Eq(t, aclGoldenKeys["acl-token-create.txt"], jsonKeys(t, res.body))
		var tok api.ACLToken
		must.NoError(t, json.Unmarshal([]byte(res.body), &tok))
		secrets = append(secrets, tok.SecretID)
		_, err := tokens.Delete(tok.AccessorID, nil)
		must.NoError(t, err)
	})

	t.Run("info", func(t *testing.T) {
		info, _, err := tokens.Info(dev.AccessorID, nil)
		must.NoError(t, err)
		must.Eq(t, dev.SecretID, info.SecretID)
		must.Eq(t, dev.Name, info.Name)
		must.Eq(t, dev.CreateIndex, info.CreateIndex)

		res := doHTTP(t, ta, "GET", "/v1/acl/token/"+dev.AccessorID, nil, tokenHeader(root))
		must.Eq(t, 200, res.status, must.Sprint(res.body))
		must.Eq(t, aclGoldenKeys["acl-token-info.txt"], jsonKeys(t, res.body))

		// A token may read itself, but no other token.
		own, _, err := ta.Client(dev.SecretID).ACLTokens().Info(dev.AccessorID, nil)
		must.NoError(t, err)
		must.Eq(t, dev.AccessorID, own.AccessorID)
		rootSelf, _, err := tokens.Self(nil)
		must.NoError(t, err)
		_, _, err = ta.Client(dev.SecretID).ACLTokens().Info(rootSelf.AccessorID, nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		denied = append(denied, body)

		_, _, err = tokens.Info("8d8a1d1c-0000-4000-8000-000000000000", nil)
		status, _ = responseError(t, err)
		must.Eq(t, 404, status)
	})

	t.Run("self", func(t *testing.T) {
		self, _, err := ta.Client(dev.SecretID).ACLTokens().Self(nil)
		must.NoError(t, err)
		must.Eq(t, dev.AccessorID, self.AccessorID)
		must.Eq(t, dev.SecretID, self.SecretID)

		res := doHTTP(t, ta, "GET", "/v1/acl/token/self", nil, tokenHeader(dev.SecretID))
		must.Eq(t, 200, res.status, must.Sprint(res.body))
		must.Eq(t, aclGoldenKeys["acl-token-self.txt"], jsonKeys(t, res.body))
	})

	t.Run("list has stubs without secrets", func(t *testing.T) {
		list, _, err := tokens.List(nil)
		must.NoError(t, err)
		names := map[string]bool{}
		for _, s := range list {
			names[s.Name] = true
		}
		must.MapContainsKeys(t, names, []string{"Bootstrap Token", "dev"})

		res := doHTTP(t, ta, "GET", "/v1/acl/tokens", nil, tokenHeader(root))
		must.Eq(t, 200, res.status, must.Sprint(res.body))
		must.Eq(t, aclGoldenKeys["acl-token-list.txt"], jsonKeys(t, res.body))
		var stubs []map[string]json.RawMessage
		must.NoError(t, json.Unmarshal([]byte(res.body), &stubs))
		must.SliceLen(t, 2, stubs)
		for _, stub := range stubs {
			must.MapNotContainsKey(t, stub, "SecretID")
		}
		for _, secret := range secrets {
			must.StrNotContains(t, res.body, secret)
		}
	})

	t.Run("update", func(t *testing.T) {
		upd := *dev
		upd.Name = "dev-renamed"
		upd.Policies = []string{"deployer", "reader"}
		out, wm, err := tokens.Update(&upd, nil)
		must.NoError(t, err)
		must.Eq(t, "dev-renamed", out.Name)
		must.Eq(t, []string{"deployer", "reader"}, out.Policies)
		must.Eq(t, dev.AccessorID, out.AccessorID)
		must.Eq(t, dev.SecretID, out.SecretID)
		must.Eq(t, dev.CreateIndex, out.CreateIndex)
		must.Eq(t, wm.LastIndex, out.ModifyIndex)

		// Global is fixed at creation.
		upd.Global = true
		_, _, err = tokens.Update(&upd, nil)
		status, _ := responseError(t, err)
		must.Eq(t, 400, status)

		// Only management may update.
		upd.Global = false
		_, _, err = ta.Client(dev.SecretID).ACLTokens().Update(&upd, nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		denied = append(denied, body)
	})

	t.Run("client tokens cannot manage tokens", func(t *testing.T) {
		dc := ta.Client(dev.SecretID).ACLTokens()
		_, _, err := dc.List(nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		denied = append(denied, body)
		_, _, err = dc.Create(&api.ACLToken{Name: "escalate", Type: "management"}, nil)
		status, body = responseError(t, err)
		must.Eq(t, 403, status)
		denied = append(denied, body)
	})

	refusals := []struct {
		name     string
		path     string
		header   http.Header
		wantBody string // exact
	}{
		{name: "self without a token", path: "/v1/acl/token/self", wantBody: "Permission denied: ACL token not found"},
		{
			name: "unknown token", path: "/v1/jobs", header: tokenHeader(unknownSecret),
			wantBody: "Permission denied: ACL token not found",
		},
		{
			name: "unknown token asking for itself", path: "/v1/acl/token/self", header: tokenHeader(unknownSecret),
			wantBody: "Permission denied: ACL token not found",
		},
		{
			name: "unknown bearer token", path: "/v1/acl/policies",
			header:   http.Header{"Authorization": {"Bearer " + unknownSecret}},
			wantBody: "Permission denied: ACL token not found",
		},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, "GET", tc.path, nil, tc.header)
			must.Eq(t, 403, res.status)
			must.Eq(t, tc.wantBody, res.body)
			must.Eq(t, "text/plain; charset=utf-8", res.header.Get("Content-Type"))
			denied = append(denied, res.body)
		})
	}

	t.Run("bearer header", func(t *testing.T) {
		res := doHTTP(t, ta, "GET", "/v1/acl/token/self", nil, http.Header{"Authorization": {"Bearer " + dev.SecretID}})
		must.Eq(t, 200, res.status, must.Sprint(res.body))
		var self api.ACLToken
		must.NoError(t, json.Unmarshal([]byte(res.body), &self))
		must.Eq(t, dev.AccessorID, self.AccessorID)
		// The token grants what its policies grant, whichever header carries it.
		res = doHTTP(t, ta, "GET", "/v1/jobs", nil, http.Header{"Authorization": {"bearer " + dev.SecretID}})
		must.Eq(t, 200, res.status, must.Sprint(res.body))
	})

	t.Run("delete", func(t *testing.T) {
		_, err := tokens.Delete(dev.AccessorID, nil)
		must.NoError(t, err)
		_, _, err = tokens.Info(dev.AccessorID, nil)
		status, _ := responseError(t, err)
		must.Eq(t, 404, status)
		_, _, err = ta.Client(dev.SecretID).Jobs().List(nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		must.Eq(t, "Permission denied: ACL token not found", body)
		denied = append(denied, body)
		_, err = tokens.Delete(dev.AccessorID, nil)
		status, _ = responseError(t, err)
		must.Eq(t, 404, status)
	})

	t.Run("secrets never leave in refusals or logs", func(t *testing.T) {
		must.SliceNotEmpty(t, denied)
		for _, body := range denied {
			must.StrHasPrefix(t, "Permission denied", body)
			for _, secret := range secrets {
				must.StrNotContains(t, body, secret)
			}
		}
		out := logs.String()
		// The capture works: every request is logged at DEBUG.
		must.StrContains(t, out, "request complete")
		for _, secret := range secrets {
			must.StrNotContains(t, out, secret)
		}
	})
}

func TestACLEndpoint_TokenExpiry(t *testing.T) {
	const minTTL = 200 * time.Millisecond
	ta, root := NewTestACLAgent(t, func(c *Config) {
		c.ACL.TokenMinExpirationTTL = minTTL
		c.ACL.TokenMaxExpirationTTL = time.Hour
	})
	c := ta.Client(root)
	mustUpsertPolicy(t, c, "reader", `namespace "default" { policy = "read" }`)

	bounds := []struct {
		name string
		ttl  time.Duration
	}{
		{name: "below the minimum", ttl: minTTL / 2},
		{name: "above the maximum", ttl: 2 * time.Hour},
	}
	for _, tc := range bounds {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.ACLTokens().Create(&api.ACLToken{Name: "x", Type: "client", Policies: []string{"reader"}, ExpirationTTL: tc.ttl}, nil)
			status, body := responseError(t, err)
			must.Eq(t, 400, status)
			must.StrContains(t, body, "expiration time")
		})
	}

	// Long enough that the request below runs before expiry even on a loaded machine.
	const ttl = minTTL + 800*time.Millisecond
	tok, _, err := c.ACLTokens().Create(&api.ACLToken{
		Name: "short", Type: "client", Policies: []string{"reader"}, ExpirationTTL: ttl,
	}, nil)
	must.NoError(t, err)
	must.NotNil(t, tok.ExpirationTime)
	must.Eq(t, tok.CreateTime.Add(ttl), *tok.ExpirationTime)

	res := doHTTP(t, ta, "GET", "/v1/jobs", nil, tokenHeader(tok.SecretID))
	must.Eq(t, 200, res.status, must.Sprint(res.body))

	waitUntil(t, 5*time.Second, "the token to expire", func() bool { return time.Now().After(*tok.ExpirationTime) })
	res = doHTTP(t, ta, "GET", "/v1/jobs", nil, tokenHeader(tok.SecretID))
	must.Eq(t, 403, res.status)
	// Until the leader reaps it the token is expired; afterwards it is gone.
	must.True(t, res.body == "Permission denied: ACL token expired" || res.body == "Permission denied: ACL token not found",
		must.Sprintf("unexpected body %q", res.body))
	must.StrNotContains(t, res.body, tok.SecretID)
}

func TestACLEndpoint_Roles(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	roles := c.ACLRoles()
	mustUpsertPolicy(t, c, "jobs-read", `namespace "default" { policy = "read" }`)
	mustUpsertPolicy(t, c, "other-read", `namespace "other" { policy = "read" }`)

	role, wm, err := roles.Create(&api.ACLRole{
		Name: "reader", Description: "reads jobs", Policies: []*api.ACLRolePolicyLink{{Name: "jobs-read"}},
	}, nil)
	must.NoError(t, err)
	must.NotEq(t, "", role.ID)
	must.Eq(t, "reader", role.Name)
	must.Eq(t, "reads jobs", role.Description)
	must.Eq(t, wm.LastIndex, role.CreateIndex)

	t.Run("get by ID and by name", func(t *testing.T) {
		byID, _, err := roles.Get(role.ID, nil)
		must.NoError(t, err)
		byName, _, err := roles.GetByName("reader", nil)
		must.NoError(t, err)
		must.Eq(t, byID, byName)
		must.Eq(t, role.ID, byID.ID)
		must.SliceLen(t, 1, byID.Policies)
		must.Eq(t, "jobs-read", byID.Policies[0].Name)

		_, _, err = roles.GetByName("nobody", nil)
		status, _ := responseError(t, err)
		must.Eq(t, 404, status)
	})

	t.Run("list", func(t *testing.T) {
		list, _, err := roles.List(nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, list)
		must.Eq(t, role.ID, list[0].ID)
		must.Eq(t, "reader", list[0].Name)
	})

	invalid := []struct {
		name string
		role *api.ACLRole
	}{
		{name: "no policies", role: &api.ACLRole{Name: "empty"}},
		{name: "unknown policy", role: &api.ACLRole{Name: "ghost", Policies: []*api.ACLRolePolicyLink{{Name: "nope"}}}},
		{name: "duplicate name", role: &api.ACLRole{Name: "reader", Policies: []*api.ACLRolePolicyLink{{Name: "jobs-read"}}}},
		{name: "invalid name", role: &api.ACLRole{Name: "no spaces", Policies: []*api.ACLRolePolicyLink{{Name: "jobs-read"}}}},
	}
	for _, tc := range invalid {
		t.Run("invalid: "+tc.name, func(t *testing.T) {
			before := ta.Server().State().LatestIndex()
			_, _, err := roles.Create(tc.role, nil)
			status, _ := responseError(t, err)
			must.Eq(t, 400, status)
			must.Eq(t, before, ta.Server().State().LatestIndex())
		})
	}

	// A token that names only the role gets the role's policies.
	linked, _, err := c.ACLTokens().Create(&api.ACLToken{
		Name: "via-role", Type: "client", Roles: []*api.ACLTokenRoleLink{{Name: "reader"}},
	}, nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, linked.Roles)
	must.Eq(t, role.ID, linked.Roles[0].ID)
	must.Eq(t, "reader", linked.Roles[0].Name)
	must.SliceEmpty(t, linked.Policies)
	lc := ta.Client(linked.SecretID)
	unlinked := mustCreateToken(t, c, "unlinked", "jobs-read")

	jobsStatus := func(t *testing.T) int {
		t.Helper()
		return doHTTP(t, ta, "GET", "/v1/jobs", nil, tokenHeader(linked.SecretID)).status
	}

	t.Run("linked token", func(t *testing.T) {
		must.Eq(t, 200, jobsStatus(t))
		_, _, err := lc.Jobs().Register(testJob("web"), nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		must.StrHasPrefix(t, "Permission denied", body)

		// The linked token may read its role; a token without the link may not.
		got, _, err := lc.ACLRoles().Get(role.ID, nil)
		must.NoError(t, err)
		must.Eq(t, role.ID, got.ID)
		_, _, err = ta.Client(unlinked.SecretID).ACLRoles().Get(role.ID, nil)
		status, _ = responseError(t, err)
		must.Eq(t, 403, status)
		// Only management lists or writes roles.
		_, _, err = lc.ACLRoles().List(nil)
		status, _ = responseError(t, err)
		must.Eq(t, 403, status)
		_, _, err = lc.ACLRoles().Create(&api.ACLRole{Name: "mine", Policies: []*api.ACLRolePolicyLink{{Name: "jobs-read"}}}, nil)
		status, _ = responseError(t, err)
		must.Eq(t, 403, status)
	})

	t.Run("update changes what linked tokens may do", func(t *testing.T) {
		upd := *role
		upd.Description = "reads elsewhere"
		upd.Policies = []*api.ACLRolePolicyLink{{Name: "other-read"}}
		out, wm, err := roles.Update(&upd, nil)
		must.NoError(t, err)
		must.Eq(t, role.ID, out.ID)
		must.Eq(t, "reads elsewhere", out.Description)
		must.Eq(t, role.CreateIndex, out.CreateIndex)
		must.Eq(t, wm.LastIndex, out.ModifyIndex)
		must.Eq(t, 403, jobsStatus(t))

		upd.Policies = []*api.ACLRolePolicyLink{{Name: "jobs-read"}}
		_, _, err = roles.Update(&upd, nil)
		must.NoError(t, err)
		must.Eq(t, 200, jobsStatus(t))
	})

	t.Run("delete", func(t *testing.T) {
		_, err := roles.Delete(role.ID, nil)
		must.NoError(t, err)
		_, _, err = roles.Get(role.ID, nil)
		status, _ := responseError(t, err)
		must.Eq(t, 404, status)
		list, _, err := roles.List(nil)
		must.NoError(t, err)
		must.SliceEmpty(t, list)
		// The token outlives its role but no longer gets its policies.
		must.Eq(t, 403, jobsStatus(t))
		_, err = roles.Delete(role.ID, nil)
		status, _ = responseError(t, err)
		must.Eq(t, 404, status)
	})
}

func TestACLEndpoint_AnonymousPolicy(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	anonJobs := func(t *testing.T) httpResult {
		t.Helper()
		return doHTTP(t, ta, "GET", "/v1/jobs", nil, nil)
	}

	steps := []struct {
		name       string
		change     func(t *testing.T)
		wantStatus int
	}{
		{name: "without an anonymous policy", change: func(*testing.T) {}, wantStatus: 403},
		{
			name: "with an anonymous read policy",
			change: func(t *testing.T) {
				mustUpsertPolicy(t, c, "anonymous", `namespace "default" { policy = "read" }`)
			},
			wantStatus: 200,
		},
		{
			name: "with the anonymous policy narrowed to another namespace",
			change: func(t *testing.T) {
				mustUpsertPolicy(t, c, "anonymous", `namespace "other" { policy = "read" }`)
			},
			wantStatus: 403,
		},
		{
			name: "after the anonymous policy is deleted",
			change: func(t *testing.T) {
				mustUpsertPolicy(t, c, "anonymous", `namespace "default" { policy = "read" }`)
				must.Eq(t, 200, anonJobs(t).status)
				_, err := c.ACLPolicies().Delete("anonymous", nil)
				must.NoError(t, err)
			},
			wantStatus: 403,
		},
	}
	for _, tc := range steps {
		t.Run(tc.name, func(t *testing.T) {
			tc.change(t)
			res := anonJobs(t)
			must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
			if tc.wantStatus == 403 {
				// fixtures/upstream-nomad-2.0.5/acl-anonymous-denied.txt: the prefix is the contract.
				must.StrHasPrefix(t, "Permission denied", res.body)
				return
			}
			must.StrContains(t, res.body, `"ID":"web"`)
		})
	}

	t.Run("anonymous policy grants no writes", func(t *testing.T) {
		mustUpsertPolicy(t, c, "anonymous", `namespace "default" { policy = "read" }`)
		before := ta.Server().State().LatestIndex()
		_, _, err := ta.Client("").Jobs().Deregister("web", false, nil)
		status, body := responseError(t, err)
		must.Eq(t, 403, status)
		must.StrHasPrefix(t, "Permission denied", body)
		must.Eq(t, before, ta.Server().State().LatestIndex())
	})
}
