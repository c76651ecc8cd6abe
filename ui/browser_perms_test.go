//go:build uitest

package ui_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

// goNamespaceCapabilities reads every NamespaceCapability* constant of the acl package from
// its source, so a capability added there without a row in perms.js fails the test below.
func goNamespaceCapabilities(t *testing.T) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "../acl/capabilities.go", nil, 0)
	must.NoError(t, err)
	var caps []string
	ast.Inspect(file, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range vs.Names {
			if strings.HasPrefix(name.Name, "NamespaceCapability") && i < len(vs.Values) {
				lit := vs.Values[i].(*ast.BasicLit)
				v, err := strconv.Unquote(lit.Value)
				must.NoError(t, err)
				caps = append(caps, v)
			}
		}
		return true
	})
	must.Greater(t, 30, len(caps))
	sort.Strings(caps)
	return caps
}

type permCase struct {
	name     string
	policies []string // HCL documents, merged as one token's policies
}

func permCases(caps []string) []permCase {
	cases := []permCase{
		{name: "no policy"},
		{name: "read", policies: []string{`namespace "default" { policy = "read" }`}},
		{name: "write", policies: []string{`namespace "default" { policy = "write" }`}},
		{name: "scale", policies: []string{`namespace "default" { policy = "scale" }`}},
		{name: "deny", policies: []string{`namespace "default" { policy = "deny" }`}},
		{name: "developer", policies: []string{developerRules}},
		{name: "operator", policies: []string{operatorRules}},
		{name: "write with deny capability", policies: []string{`namespace "default" {
  policy       = "write"
  capabilities = ["deny"]
}`}},
		{name: "deny in a second policy wins", policies: []string{
			`namespace "default" { policy = "write" }`, `namespace "default" { capabilities = ["deny"] }`}},
		{name: "read plus purge-job", policies: []string{`namespace "default" {
  policy       = "read"
  capabilities = ["purge-job"]
}`}},
		{name: "two policies add up", policies: []string{
			`namespace "default" { capabilities = ["submit-job"] }`, `namespace "default" { capabilities = ["purge-job"] }`}},
		{name: "glob", policies: []string{`namespace "prod-*" { policy = "write" }`}},
		{name: "exact beats glob", policies: []string{`namespace "prod-*" { policy = "write" }
namespace "prod-web" { policy = "read" }`}},
		{name: "closest glob wins", policies: []string{`namespace "*" { policy = "read" }
namespace "prod-*" { policy = "write" }
namespace "prod-w*" { policy = "deny" }`}},
		{name: "glob tie goes to the lexically first", policies: []string{`namespace "*-web" { policy = "read" }
namespace "prod-*" { policy = "write" }`}},
		{name: "star everywhere", policies: []string{`namespace "*" { policy = "write" }`}},
		{name: "deny on glob, write on exact", policies: []string{`namespace "*" { policy = "deny" }
namespace "default" { policy = "write" }`}},
		{name: "other blocks grant nothing in namespaces", policies: []string{`node { policy = "write" }
agent { policy = "write" }`}},
	}
	for _, c := range caps {
		cases = append(cases, permCase{
			name:     "only " + c,
			policies: []string{fmt.Sprintf(`namespace "default" { capabilities = [%q] }`, c)},
		})
	}
	return cases
}

var permNamespaces = []string{"default", "prod-web", "prod-api", "dev-web", "prod-", "other"}

// TestUI_PermissionsAgreeWithServerACL runs perms.js in the browser on every capability of
// acl/capabilities.go, in several namespaces, under policies that exercise dispositions,
// implications, deny, globs and merging, and fails on any answer that differs from what
// the acl package decides, and on any capability one side knows and the other does not.
// The UI's buttons are only as honest as this agreement.
func TestUI_PermissionsAgreeWithServerACL(t *testing.T) {
	caps := goNamespaceCapabilities(t)
	cases := permCases(caps)

	type jsCase struct {
		Policies []json.RawMessage
		Queries  [][2]string
	}
	var input []jsCase
	var want [][]bool
	var wantActions [][]bool
	for _, c := range cases {
		var parsed []*acl.Policy
		var docs []json.RawMessage
		for _, src := range c.policies {
			p, err := acl.Parse(src)
			must.NoError(t, err, must.Sprintf("case %s", c.name))
			parsed = append(parsed, p)
			// The same JSON the server returns as a policy's RulesJSON.
			raw, err := json.Marshal(p)
			must.NoError(t, err)
			docs = append(docs, raw)
		}
		a, err := acl.NewACL(false, parsed)
		must.NoError(t, err)
		jc := jsCase{Policies: docs}
		var row, actions []bool
		for _, ns := range permNamespaces {
			for _, capability := range caps {
				jc.Queries = append(jc.Queries, [2]string{ns, capability})
				row = append(row, a.AllowNamespaceOperation(ns, capability))
			}
			// The rules of nomad/job_endpoint.go (stop, purge) and the restore endpoint.
			allow := func(c string) bool { return a.AllowNamespaceOperation(ns, c) }
			actions = append(actions,
				allow(acl.NamespaceCapabilitySubmitJob) || allow(acl.NamespaceCapabilityDeregisterJob) || allow(acl.NamespaceCapabilityPurgeJob),
				allow(acl.NamespaceCapabilityPurgeJob),
				allow(acl.NamespaceCapabilitySubmitJob))
		}
		input = append(input, jc)
		want = append(want, row)
		wantActions = append(wantActions, actions)
	}
	raw, err := json.Marshal(input)
	must.NoError(t, err)
	nsJSON, _ := json.Marshal(permNamespaces)

	ta := agenttest.NewAgent(t, nil)
	ctx := newBrowser(t)
	var out struct {
		Names   []string
		Answers [][]bool
		Actions [][]bool
		Mgmt    bool
	}
	expr := `(async () => {
  const m = await import("/ui/perms.js");
  const cases = ` + string(raw) + `;
  const namespaces = ` + string(nsJSON) + `;
  const answers = [], actions = [];
  for (const c of cases) {
    const a = new m.ACL("client", c.Policies);
    answers.push(c.Queries.map(([ns, cap]) => a.allowNamespaceOperation(ns, cap)));
    actions.push(namespaces.flatMap((ns) => [a.canStop(ns), a.canPurge(ns), a.canRestore(ns)]));
  }
  const mgmt = new m.ACL("management");
  return { Names: m.NAMESPACE_CAPABILITIES.map((r) => r[0]).sort(), Answers: answers, Actions: actions,
    Mgmt: mgmt.canPurge("anything") && mgmt.allowNamespaceOperation("x", "alloc-node-exec") };
})()`
	run(t, ctx,
		chromedp.Navigate(ta.URL()+"/ui/#/namespaces"),
		chromedp.WaitVisible("#main", chromedp.ByQuery),
		chromedp.Evaluate(expr, &out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}),
	)
	must.Eq(t, caps, out.Names, must.Sprint("perms.js and acl/capabilities.go list different capabilities"))
	must.True(t, out.Mgmt)
	must.Len(t, len(cases), out.Answers)
	disagreements := 0
	for i, c := range cases {
		for j, q := range input[i].Queries {
			if out.Answers[i][j] != want[i][j] {
				disagreements++
				t.Errorf("case %q: %s in %q: Go says %t, perms.js says %t", c.name, q[1], q[0], want[i][j], out.Answers[i][j])
			}
		}
		must.Eq(t, wantActions[i], out.Actions[i], must.Sprintf("case %q: stop/purge/restore decisions differ", c.name))
	}
	t.Logf("%d cases, %d answers compared, %d disagreements", len(cases), len(cases)*len(permNamespaces)*len(caps), disagreements)
}
