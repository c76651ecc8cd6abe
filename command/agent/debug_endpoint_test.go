package agent

import (
	"net/http"
	"testing"

	"github.com/shoenig/test/must"
)

// enable_debug serves /debug/pprof/ and nothing else does; with ACLs on it takes agent write
// or management.
func TestSecurity_DebugPprofServedOnlyWithEnableDebug(t *testing.T) {
	t.Run("without enable_debug there is no route", func(t *testing.T) {
		ta := NewTestAgent(t, func(c *Config) { c.EnableDebug = false })
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/cmdline"} {
			res := doHTTP(t, ta, http.MethodGet, path, nil, nil)
			must.Eq(t, http.StatusNotFound, res.status, must.Sprint(path))
		}
	})
	t.Run("with enable_debug and ACLs off the profiles are served", func(t *testing.T) {
		ta := NewTestAgent(t, func(c *Config) { c.EnableDebug = true })
		res := doHTTP(t, ta, http.MethodGet, "/debug/pprof/", nil, nil)
		must.Eq(t, http.StatusOK, res.status)
		must.StrContains(t, res.body, "goroutine")
		res = doHTTP(t, ta, http.MethodGet, "/debug/pprof/goroutine?debug=1", nil, nil)
		must.Eq(t, http.StatusOK, res.status)
		must.StrContains(t, res.body, "goroutine profile:")
	})
	t.Run("with ACLs on only agent write or management", func(t *testing.T) {
		ta, root := NewTestACLAgent(t, func(c *Config) { c.EnableDebug = true })
		agentRead := clientToken(t, ta, root, "agent-read", `agent { policy = "read" }`)
		nsWrite := clientToken(t, ta, root, "ns-write", `namespace "*" { policy = "write" }`)
		agentWrite := clientToken(t, ta, root, "agent-write", `agent { policy = "write" }`)
		cases := []struct {
			name       string
			token      string
			wantStatus int
		}{
			{name: "anonymous", wantStatus: http.StatusForbidden},
			{name: "agent read", token: agentRead.SecretID, wantStatus: http.StatusForbidden},
			{name: "namespace write", token: nsWrite.SecretID, wantStatus: http.StatusForbidden},
			{name: "agent write", token: agentWrite.SecretID, wantStatus: http.StatusOK},
			{name: "management", token: root, wantStatus: http.StatusOK},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				res := doHTTP(t, ta, http.MethodGet, "/debug/pprof/heap", nil, http.Header{"X-Nomad-Token": {tc.token}})
				must.Eq(t, tc.wantStatus, res.status)
				if tc.wantStatus == http.StatusForbidden {
					must.StrHasPrefix(t, "Permission denied", res.body)
				}
			})
		}
	})
}
