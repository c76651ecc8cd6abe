package agent

import (
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/shoenig/test/must"
)

var (
	restWildcardRe = regexp.MustCompile(`\{[a-zA-Z]+\.\.\.\}`)
	wildcardRe     = regexp.MustCompile(`\{[a-zA-Z]+\}`)
)

// TestRoutes_ReachTheirHandlers sends a probe path for every registered pattern, and the
// paths the official client uses, through the agent's real mux: each must reach its own
// handler. A pattern shadowed by a broader one (as /v1/node/{id} once swallowed
// /v1/node/pools) fails here instead of answering a wrong 404.
func TestRoutes_ReachTheirHandlers(t *testing.T) {
	ta := NewTestAgent(t, nil)
	mux := ta.Agent.http.mux
	routes := registeredRoutes(t)

	reach := func(t *testing.T, method, path string) (pattern, handler string) {
		t.Helper()
		_, pattern = mux.Handler(httptest.NewRequest(method, path, nil))
		return pattern, routes[pattern][method]
	}

	t.Run("every pattern", func(t *testing.T) {
		for pattern, byMethod := range routes {
			probe := restWildcardRe.ReplaceAllString(pattern, "probe/more")
			probe = wildcardRe.ReplaceAllString(probe, "probe")
			for method, handler := range byMethod {
				gotPattern, gotHandler := reach(t, method, probe)
				must.Eq(t, pattern, gotPattern, must.Sprintf("%s %s", method, probe))
				must.Eq(t, handler, gotHandler, must.Sprintf("%s %s", method, probe))
			}
		}
	})

	cases := []struct {
		name    string
		method  string
		path    string
		handler string
	}{
		{name: "node pools list", method: "GET", path: "/v1/node/pools", handler: "s.nodePoolList"},
		{name: "node pool register", method: "PUT", path: "/v1/node/pools", handler: "s.nodePoolUpsert"},
		{name: "node pool read", method: "GET", path: "/v1/node/pool/default", handler: "s.nodePoolRead"},
		{name: "node pool named allocations", method: "GET", path: "/v1/node/pool/allocations", handler: "s.nodePoolRead"},
		{name: "node pool name with an escaped slash", method: "DELETE", path: "/v1/node/pool/node%2Fpool", handler: "s.nodePoolDelete"},
		{name: "node pool jobs", method: "GET", path: "/v1/node/pool/gpu/jobs", handler: "s.nodePoolJobs"},
		{name: "node read", method: "GET", path: "/v1/node/5f2c1f4e-0000-4000-8000-000000000001", handler: "s.nodeRead"},
		{name: "node allocations", method: "GET", path: "/v1/node/5f2c1f4e-0000-4000-8000-000000000001/allocations", handler: "s.nodeSubresource"},
		{name: "acl policy self", method: "GET", path: "/v1/acl/policy/self", handler: "s.aclPolicySelf"},
		{name: "acl policy named selfish", method: "GET", path: "/v1/acl/policy/selfish", handler: "s.aclPolicyRead"},
		{name: "variables list", method: "GET", path: "/v1/vars", handler: "s.variablesList"},
		{name: "variable read", method: "GET", path: "/v1/var/a/b/c", handler: "s.variableRead"},
		{name: "variable lock", method: "PUT", path: "/v1/var/a/b?lock-acquire", handler: "s.variablePut"},
		{name: "namespaces list", method: "GET", path: "/v1/namespaces", handler: "s.namespaceList"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, handler := reach(t, tc.method, tc.path)
			must.Eq(t, tc.handler, handler)
		})
	}
}
