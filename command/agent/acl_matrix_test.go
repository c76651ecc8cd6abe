package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// The ACL matrix sends every HTTP route (matrixEndpoints) as every kind of caller
// (matrixRows) and checks each cell's verdict: a refusal is a 403 whose body starts with
// "Permission denied" and that changed nothing; anything allowed gets the route's normal
// answer. TestACLMatrix_CoversEveryRoute fails when a route is added without matrix rows.

// matrixRow is one caller.
type matrixRow struct {
	name string
	// rules is the policy of the row's client token, or, for an anonymous row, the
	// `anonymous` policy in force while the row runs ("" = no anonymous policy).
	rules      string
	anonymous  bool // sends no token
	viaRole    bool // the token holds its policy through a role, not directly
	expired    bool // the token has expired (its rules would otherwise allow)
	deleted    bool // the token was deleted (likewise)
	management bool
}

const (
	rowAnonymous     = "anonymous"
	rowAnonymousRead = "anonymous-read"
	rowRead          = "read"
	rowWrite         = "write"
	rowScale         = "scale"
	rowDeployer      = "deployer"
	rowStopper       = "stopper"
	rowPurger        = "purger"
	rowOtherNS       = "other-namespace"
	rowExpired       = "expired"
	rowDeleted       = "deleted"
	rowManagement    = "management"
	rowAgentRead     = "agent-read"
	rowAgentWrite    = "agent-write"
	rowNodeRead      = "node-read"
	rowNodeWrite     = "node-write"
	rowOperatorRead  = "operator-read"
	rowOperatorWrite = "operator-write"
)

var matrixRows = []matrixRow{
	{name: rowAnonymous, anonymous: true},
	{name: rowAnonymousRead, anonymous: true, rules: `namespace "default" { policy = "read" }`},
	{name: rowRead, rules: `namespace "default" { policy = "read" }`},
	{name: rowWrite, rules: `namespace "default" { policy = "write" }`},
	{name: rowScale, rules: `namespace "default" { policy = "scale" }`, viaRole: true},
	{name: rowDeployer, rules: deployerRules},
	{name: rowStopper, rules: `namespace "default" { capabilities = ["deregister-job"] }`},
	{name: rowPurger, rules: `namespace "default" { capabilities = ["purge-job"] }`},
	{name: rowOtherNS, rules: `namespace "other" { policy = "write" }`},
	{name: rowExpired, rules: `namespace "default" { policy = "write" }`, expired: true},
	{name: rowDeleted, rules: `namespace "default" { policy = "write" }`, deleted: true},
	{name: rowManagement, management: true},
	{name: rowAgentRead, rules: `agent { policy = "read" }`},
	{name: rowAgentWrite, rules: `agent { policy = "write" }`},
	{name: rowNodeRead, rules: `node { policy = "read" }`},
	{name: rowNodeWrite, rules: `node { policy = "write" }`},
	{name: rowOperatorRead, rules: `operator { policy = "read" }`},
	{name: rowOperatorWrite, rules: `operator { policy = "write" }`},
}

// Who may do what. Each set is named after what it takes; the endpoint tables below only
// pick a set, so a cell's verdict is stated in one place.
var (
	// Status routes check no token at all, as upstream.
	allowEveryone = rowNames(matrixRows)
	// Routes that filter by what the caller may see: any caller that resolves.
	allowResolvable = without(allowEveryone, rowExpired, rowDeleted)
	// Routes about the caller's own token: a real, live token.
	allowTokens = without(allowResolvable, rowAnonymous, rowAnonymousRead)
	// list-jobs.
	allowListJobs = []string{rowAnonymousRead, rowRead, rowWrite, rowDeployer, rowManagement}
	// parse-job or submit-job.
	allowParse = allowListJobs
	// read-job (scale's disposition includes it; so read-job-scaling or read-job for the
	// scale status is the same set).
	allowReadJob = []string{rowAnonymousRead, rowRead, rowWrite, rowScale, rowDeployer, rowManagement}
	// submit-job (or register-job / revert-job / tag-job-version, which no row holds alone).
	allowSubmit = []string{rowWrite, rowDeployer, rowManagement}
	// scale-job or submit-job.
	allowScale = []string{rowWrite, rowScale, rowDeployer, rowManagement}
	// Stop: submit-job, deregister-job or purge-job.
	allowStop = []string{rowWrite, rowDeployer, rowStopper, rowPurger, rowManagement}
	// Purge: purge-job only, which `policy = "write"` includes and submit-job does not.
	allowPurge = []string{rowWrite, rowPurger, rowManagement}
	// Namespace read: any capability in the namespace.
	allowAnyInDefault = []string{rowAnonymousRead, rowRead, rowWrite, rowScale, rowDeployer, rowStopper, rowPurger, rowManagement}
	allowManagement   = []string{rowManagement}
	// Agent write (profiling): what upstream requires of its agent pprof API.
	allowAgentWrite = []string{rowAgentWrite, rowManagement}
	// Operator read and write: autopilot's routes.
	allowOperatorRead  = []string{rowOperatorRead, rowOperatorWrite, rowManagement}
	allowOperatorWrite = []string{rowOperatorWrite, rowManagement}
)

func rowNames(rows []matrixRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.name)
	}
	return out
}

func without(names []string, drop ...string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

// matrixEndpoint is one route and verb. path and body may hold placeholders that the
// fixture fills per cell: {eval}, {record}, {deployment}, {depAlloc}, {readToken},
// {scratchToken}, {scaleRole}, {scratchRole}, {scratchRule}, {prevVersion}.
type matrixEndpoint struct {
	name   string
	method string
	path   string
	body   string
	// stream: only the status line is read (the answer never ends).
	stream bool
	// setup runs with the management token before each cell, after the common reset, to
	// put what this route needs in place (something to delete, say).
	setup func(t *testing.T, f *matrixFixture)
	// allow lists the rows that are let through.
	allow []string
	// okStatus is the answer of an allowed cell; 0 means 200.
	okStatus int
	// check, when set, runs after an allowed cell.
	check func(t *testing.T, f *matrixFixture)
}

func mustJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

var (
	matrixRegisterBody = mustJSON(&api.JobRegisterRequest{Job: testJob("web")})
	matrixParseBody    = mustJSON(&api.JobsParseRequest{
		JobHCL: `job "p" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}`,
		Canonicalize: true,
	})
)

func matrixJobEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "jobs list", method: "GET", path: "/v1/jobs", allow: allowListJobs},
		{name: "jobs register", method: "PUT", path: "/v1/jobs", body: matrixRegisterBody, allow: allowSubmit},
		{name: "jobs parse", method: "POST", path: "/v1/jobs/parse", body: matrixParseBody, allow: allowParse},
		{name: "job read", method: "GET", path: "/v1/job/web", allow: allowReadJob},
		{name: "job update", method: "POST", path: "/v1/job/web", body: matrixRegisterBody, allow: allowSubmit},
		{
			name: "job stop", method: "DELETE", path: "/v1/job/web", allow: allowStop,
			check: func(t *testing.T, f *matrixFixture) {
				job := f.job(t)
				must.NotNil(t, job)
				must.True(t, job.Stop)
			},
		},
		{
			name: "job purge", method: "DELETE", path: "/v1/job/web?purge=true", allow: allowPurge,
			check: func(t *testing.T, f *matrixFixture) { must.Nil(t, f.job(t)) },
		},
		{name: "jobs statuses", method: "GET", path: "/v1/jobs/statuses", allow: allowReadJob},
		{name: "jobs statuses of named jobs", method: "POST", path: "/v1/jobs/statuses", body: `{"Jobs":[{"ID":"web","Namespace":"default"}]}`, allow: allowReadJob},
		{name: "job versions", method: "GET", path: "/v1/job/web/versions", allow: allowReadJob},
		{name: "job summary", method: "GET", path: "/v1/job/web/summary", allow: allowReadJob},
		{
			name: "job revert", method: "POST", path: "/v1/job/web/revert",
			body: `{"JobID":"web","JobVersion":{prevVersion}}`, allow: allowSubmit,
		},
		{
			name: "job stable", method: "PUT", path: "/v1/job/web/stable",
			body: `{"JobID":"web","JobVersion":{prevVersion},"Stable":true}`, allow: allowSubmit,
		},
		{name: "job scale status", method: "GET", path: "/v1/job/web/scale", allow: allowReadJob},
		{
			name: "job scale", method: "POST", path: "/v1/job/web/scale",
			body: `{"Count":1,"Target":{"Job":"web","Group":"web"},"Message":"matrix"}`, allow: allowScale,
		},
		{
			name: "job tag", method: "PUT", path: "/v1/job/web/versions/golden/tag", body: `{}`,
			setup: func(t *testing.T, f *matrixFixture) { f.setGoldenTag(t, false) }, allow: allowSubmit,
		},
		{
			name: "job untag", method: "DELETE", path: "/v1/job/web/versions/golden/tag",
			setup: func(t *testing.T, f *matrixFixture) { f.setGoldenTag(t, true) }, allow: allowPurge,
		},
		{name: "job evaluations", method: "GET", path: "/v1/job/web/evaluations", allow: allowReadJob},
		{name: "job allocations", method: "GET", path: "/v1/job/web/allocations", allow: allowReadJob},
		{name: "job deployment", method: "GET", path: "/v1/job/web/deployment", allow: allowReadJob},
		{name: "job deployments", method: "GET", path: "/v1/job/web/deployments", allow: allowReadJob},
	}
}

func matrixEvalEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "evaluations list", method: "GET", path: "/v1/evaluations", allow: allowReadJob},
		{name: "evaluations count", method: "GET", path: "/v1/evaluations/count", allow: allowReadJob},
		// Management only; with the broker running (the default) an allowed delete is a 400.
		{name: "evaluations delete", method: "DELETE", path: "/v1/evaluations",
			body: `{"EvalIDs":["{eval}"]}`, allow: allowManagement, okStatus: 400},
		{name: "evaluation read", method: "GET", path: "/v1/evaluation/{eval}", allow: allowReadJob},
		{name: "evaluation allocations", method: "GET", path: "/v1/evaluation/{eval}/allocations", allow: allowReadJob},
	}
}

func matrixNamespaceEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "namespaces list", method: "GET", path: "/v1/namespaces", allow: allowResolvable},
		{name: "namespace read", method: "GET", path: "/v1/namespace/default", allow: allowAnyInDefault},
		{
			name: "namespace create", method: "PUT", path: "/v1/namespace", body: `{"Name":"scratch"}`,
			setup: func(t *testing.T, f *matrixFixture) { f.setScratchNamespace(t, false) },
			allow: allowManagement,
		},
		{
			name: "namespace update", method: "POST", path: "/v1/namespace/scratch",
			body: `{"Name":"scratch","Description":"changed"}`, allow: allowManagement,
		},
		{
			name: "namespace delete", method: "DELETE", path: "/v1/namespace/scratch",
			setup: func(t *testing.T, f *matrixFixture) { f.setScratchNamespace(t, true) },
			allow: allowManagement,
		},
	}
}

func matrixACLEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		// Bootstrap checks no token; after the first it is refused to everyone alike.
		{name: "acl bootstrap", method: "POST", path: "/v1/acl/bootstrap", allow: allowEveryone, okStatus: 400},
		// Policy and role lists answer what the caller holds; management sees all.
		{name: "acl policies list", method: "GET", path: "/v1/acl/policies", allow: allowResolvable},
		{name: "acl policy read", method: "GET", path: "/v1/acl/policy/row-read", allow: []string{rowRead, rowManagement}},
		{
			name: "acl policy write", method: "PUT", path: "/v1/acl/policy/scratch",
			body: `{"Name":"scratch","Rules":"namespace \"default\" { policy = \"write\" }"}`, allow: allowManagement,
		},
		{
			name: "acl policy delete", method: "DELETE", path: "/v1/acl/policy/scratch",
			setup: func(t *testing.T, f *matrixFixture) {
				mustUpsertPolicy(t, f.mgmt, "scratch", `namespace "default" { policy = "write" }`)
			},
			allow: allowManagement,
		},
		{name: "acl tokens list", method: "GET", path: "/v1/acl/tokens", allow: allowManagement},
		{
			name: "acl token create", method: "PUT", path: "/v1/acl/token",
			body: `{"Name":"made-by-matrix","Type":"management"}`, allow: allowManagement,
		},
		{name: "acl token self", method: "GET", path: "/v1/acl/token/self", allow: allowTokens},
		// Any live token may make a one-time token for itself.
		{name: "acl one-time token create", method: "PUT", path: "/v1/acl/token/onetime", allow: allowTokens},
		// The one-time secret is the only credential: an unknown one is refused to everyone.
		{name: "acl one-time token exchange", method: "PUT", path: "/v1/acl/token/onetime/exchange",
			body: `{"OneTimeSecretID":"00000000-0000-4000-8000-000000000000"}`, allow: nil},
		{name: "acl token read", method: "GET", path: "/v1/acl/token/{readToken}", allow: []string{rowRead, rowManagement}},
		{
			name: "acl token update", method: "POST", path: "/v1/acl/token/{scratchToken}",
			body:  `{"AccessorID":"{scratchToken}","Name":"renamed","Type":"management"}`,
			setup: func(t *testing.T, f *matrixFixture) { f.ensureScratchToken(t) }, allow: allowManagement,
		},
		{
			name: "acl token delete", method: "DELETE", path: "/v1/acl/token/{scratchToken}",
			setup: func(t *testing.T, f *matrixFixture) { f.ensureScratchToken(t) }, allow: allowManagement,
		},
		{name: "acl roles list", method: "GET", path: "/v1/acl/roles", allow: allowManagement},
		{
			name: "acl role create", method: "PUT", path: "/v1/acl/role",
			body:  `{"Name":"made-by-matrix","Policies":[{"Name":"row-write"}]}`,
			setup: func(t *testing.T, f *matrixFixture) { f.deleteRoleNamed(t, "made-by-matrix") }, allow: allowManagement,
		},
		{name: "acl role read", method: "GET", path: "/v1/acl/role/{scaleRole}", allow: []string{rowScale, rowManagement}},
		{name: "acl role read by name", method: "GET", path: "/v1/acl/role/name/row-scale", allow: []string{rowScale, rowManagement}},
		{
			name: "acl role update", method: "POST", path: "/v1/acl/role/{scratchRole}",
			body:  `{"ID":"{scratchRole}","Name":"scratch","Policies":[{"Name":"row-write"}]}`,
			setup: func(t *testing.T, f *matrixFixture) { f.ensureScratchRole(t) }, allow: allowManagement,
		},
		{
			name: "acl role delete", method: "DELETE", path: "/v1/acl/role/{scratchRole}",
			setup: func(t *testing.T, f *matrixFixture) { f.ensureScratchRole(t) }, allow: allowManagement,
		},
	}
}

func matrixStreamAndHistoryEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "event stream", method: "GET", path: "/v1/event/stream?topic=Job", stream: true, allow: allowReadJob},
		{name: "purge history list", method: "GET", path: "/v1/jobs/purged", allow: allowReadJob},
		{name: "purge history read", method: "GET", path: "/v1/jobs/purged/{record}", allow: allowReadJob},
		// The chain spans every namespace: read-job in any one runs the check (the record that
		// breaks it is named only to a reader of its namespace).
		{name: "purge history verify", method: "GET", path: "/v1/jobs/purged/verify", allow: append(slices.Clone(allowReadJob), rowOtherNS)},
		// The record's job exists again, so an allowed restore conflicts; a refused one is a
		// 403 before that question is asked.
		{
			name: "purge history restore", method: "POST", path: "/v1/jobs/purged/{record}/restore",
			allow: allowSubmit, okStatus: 409,
		},
	}
}

func matrixStatusEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "status leader", method: "GET", path: "/v1/status/leader", allow: allowEveryone},
		{name: "status peers", method: "GET", path: "/v1/status/peers", allow: allowEveryone},
		{name: "regions", method: "GET", path: "/v1/regions", allow: allowEveryone},
		// Upstream serves metrics without an ACL: names and numbers, no secrets.
		{name: "metrics", method: "GET", path: "/v1/metrics", allow: allowEveryone},
		// Public keys for verifying workload identities: anyone may fetch them, as upstream.
		{name: "jwks", method: "GET", path: "/.well-known/jwks.json", allow: allowEveryone},
		{name: "agent self", method: "GET", path: "/v1/agent/self", allow: []string{rowAgentRead, rowAgentWrite, rowManagement}},
		// Upstream gates the member list on node read, not agent read.
		{name: "agent members", method: "GET", path: "/v1/agent/members", allow: allowNodeRead},
		{name: "system gc", method: "PUT", path: "/v1/system/gc", allow: allowManagement},
		// The matrix agent keeps Raft in memory and gossips with no one: an allowed join
		// answers 200 with the error in its body, as a failed join does upstream.
		{name: "agent join", method: "PUT", path: "/v1/agent/join?address=127.0.0.1:1", allow: allowAgentWrite},
		{name: "agent force-leave", method: "PUT", path: "/v1/agent/force-leave?node=nope", allow: allowAgentWrite},
		{name: "agent force-leave prune", method: "POST", path: "/v1/agent/force-leave?node=nope&prune=1", allow: allowAgentWrite},
		// Health needs no token, as upstream.
		{name: "agent health", method: "GET", path: "/v1/agent/health", allow: allowEveryone},
		{name: "agent reload", method: "PUT", path: "/v1/agent/reload", allow: []string{rowAgentWrite, rowManagement}},
		{name: "agent pprof heap", method: "GET", path: "/v1/agent/pprof/heap", allow: allowAgentWrite},
		{name: "agent schedulers", method: "GET", path: "/v1/agent/schedulers", allow: []string{rowAgentRead, rowAgentWrite, rowManagement}},
		{name: "agent scheduler config", method: "GET", path: "/v1/agent/schedulers/config", allow: []string{rowAgentRead, rowAgentWrite, rowManagement}},
		// Written back unchanged (0 workers, as the matrix agent runs), so an allowed write
		// changes nothing either.
		{name: "agent scheduler config write", method: "PUT", path: "/v1/agent/schedulers/config",
			body: `{"num_schedulers":0,"enabled_schedulers":["batch","system","sysbatch","service","_core"]}`, allow: allowAgentWrite},
	}
}

// matrixDebugEndpoints are the pprof routes, which the matrix agent serves because it sets
// enable_debug. The CPU profile and trace run for the shortest time each accepts.
func matrixDebugEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "pprof index", method: "GET", path: "/debug/pprof/", allow: allowAgentWrite},
		{name: "pprof heap", method: "GET", path: "/debug/pprof/heap", allow: allowAgentWrite},
		{name: "pprof cmdline", method: "GET", path: "/debug/pprof/cmdline", allow: allowAgentWrite},
		{name: "pprof symbol", method: "GET", path: "/debug/pprof/symbol", allow: allowAgentWrite},
		{name: "pprof symbol lookup", method: "POST", path: "/debug/pprof/symbol", body: "0x1", allow: allowAgentWrite},
		{name: "pprof profile", method: "GET", path: "/debug/pprof/profile?seconds=1", allow: allowAgentWrite},
		{name: "pprof trace", method: "GET", path: "/debug/pprof/trace?seconds=0.01", allow: allowAgentWrite},
	}
}

// matrixOperatorEndpoints: the Raft routes take a management token, autopilot's operator
// read or write, as upstream's.
func matrixOperatorEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "raft configuration", method: "GET", path: "/v1/operator/raft/configuration", allow: allowManagement},
		// No such peer: an allowed cell gets the 404 that names it.
		{name: "raft remove peer", method: "DELETE", path: "/v1/operator/raft/peer?id=nope", allow: allowManagement, okStatus: 404},
		{name: "raft transfer leadership", method: "PUT", path: "/v1/operator/raft/transfer-leadership?id=nope", allow: allowOperatorWrite, okStatus: 404},
		{name: "autopilot get", method: "GET", path: "/v1/operator/autopilot/configuration", allow: allowOperatorRead},
		{
			name: "autopilot set", method: "PUT", path: "/v1/operator/autopilot/configuration",
			body:  `{"CleanupDeadServers":true,"LastContactThreshold":"200ms","MaxTrailingLogs":250,"ServerStabilizationTime":"10s"}`,
			allow: allowOperatorWrite,
		},
		{name: "autopilot health", method: "GET", path: "/v1/operator/autopilot/health", allow: allowOperatorRead},
	}
}

func allMatrixEndpoints() []matrixEndpoint {
	return slices.Concat(matrixJobEndpoints(), matrixEvalEndpoints(), matrixNamespaceEndpoints(),
		matrixACLEndpoints(), matrixStreamAndHistoryEndpoints(), matrixStatusEndpoints(),
		matrixAllocAndNodeEndpoints(), matrixNodeLifecycleEndpoints(), matrixClientAllocEndpoints(),
		matrixClientAllocControlEndpoints(), matrixAllocStopEndpoints(), matrixDebugEndpoints(),
		matrixDeploymentEndpoints(), matrixOperatorEndpoints(), matrixMonitorEndpoints(), matrixJobEvalEndpoints(),
		matrixJobDispatchEndpoints(),
		matrixJobPlanEndpoints(), matrixJobSubmissionEndpoints(), matrixKeyringEndpoints(),
		matrixVariableEndpoints(), matrixNodePoolEndpoints(), matrixSearchEndpoints(),
		matrixScalingEndpoints(), matrixVolumeEndpoints(), matrixSchedulerConfigEndpoints(), matrixACLAuthEndpoints(),
		matrixServiceEndpoints(), matrixFSEndpoints(), matrixCLIOpsEndpoints(),
		matrixNodeMetaEndpoints(), matrixNodeIdentityEndpoints(), matrixACLIdentityEndpoints(),
		matrixJobProtectionEndpoints(), matrixEventSinkEndpoints())
}

func TestACLMatrix_Jobs(t *testing.T)        { runACLMatrix(t, matrixJobEndpoints(), matrixRows) }
func TestACLMatrix_Evaluations(t *testing.T) { runACLMatrix(t, matrixEvalEndpoints(), matrixRows) }
func TestACLMatrix_Namespaces(t *testing.T)  { runACLMatrix(t, matrixNamespaceEndpoints(), matrixRows) }
func TestACLMatrix_ACL(t *testing.T)         { runACLMatrix(t, matrixACLEndpoints(), matrixRows) }
func TestACLMatrix_StreamAndHistory(t *testing.T) {
	runACLMatrix(t, matrixStreamAndHistoryEndpoints(), matrixRows)
}
func TestACLMatrix_Status(t *testing.T) { runACLMatrix(t, matrixStatusEndpoints(), matrixRows) }
func TestACLMatrix_Debug(t *testing.T)  { runACLMatrix(t, matrixDebugEndpoints(), matrixRows) }
func TestACLMatrix_Operator(t *testing.T) {
	runACLMatrix(t, matrixOperatorEndpoints(), matrixRows)
}

// TestACLMatrix_RemovalRules pins the rows the product exists for, so that an edit of the
// tables above cannot quietly give purge to a token that may only stop.
func TestACLMatrix_RemovalRules(t *testing.T) {
	cases := []struct {
		name      string
		row       string
		wantStop  bool
		wantPurge bool
	}{
		{name: "deployer stops but does not purge", row: rowDeployer, wantStop: true},
		{name: "stopper stops but does not purge", row: rowStopper, wantStop: true},
		{name: "purger purges (and so stops)", row: rowPurger, wantStop: true, wantPurge: true},
		{name: "write keeps both", row: rowWrite, wantStop: true, wantPurge: true},
		{name: "read does neither", row: rowRead},
		{name: "scale does neither", row: rowScale},
	}
	var stop, purge *matrixEndpoint
	for _, ep := range matrixJobEndpoints() {
		switch ep.name {
		case "job stop":
			stop = &ep
		case "job purge":
			purge = &ep
		}
	}
	must.NotNil(t, stop)
	must.NotNil(t, purge)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.wantStop, slices.Contains(stop.allow, tc.row))
			must.Eq(t, tc.wantPurge, slices.Contains(purge.allow, tc.row))
		})
	}
}

// runACLMatrix starts one ACL agent with a token for every row and runs every (endpoint,
// row) cell against it. Each cell first puts the shared state back (job "web" registered,
// running, with an earlier version; the anonymous policy as the row wants it), so cells do
// not depend on their order.
func runACLMatrix(t *testing.T, endpoints []matrixEndpoint, rows []matrixRow) {
	t.Helper()
	known := rowNames(rows)
	for _, ep := range endpoints {
		for _, name := range ep.allow {
			must.SliceContains(t, known, name, must.Sprintf("endpoint %q allows unknown row %q", ep.name, name))
		}
	}
	f := newMatrixFixture(t, rows)
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			for _, row := range rows {
				t.Run(row.name, func(t *testing.T) {
					f.runCell(t, ep, row, slices.Contains(ep.allow, row.name))
				})
			}
		})
	}
	t.Run("no secret in the logs", func(t *testing.T) {
		out := f.logs.String()
		must.StrContains(t, out, "request complete")
		must.StrNotContains(t, out, f.root)
		for _, secret := range f.secrets {
			if secret != "" {
				must.StrNotContains(t, out, secret)
			}
		}
	})
}

// matrixMinTTL is the agent's shortest token lifetime, so the expired row expires quickly.
const matrixMinTTL = 100 * time.Millisecond

// matrixFixture is the agent of one matrix run and what its cells refer to.
type matrixFixture struct {
	ta      *TestAgent
	root    string
	mgmt    *api.Client
	http    *http.Client
	logs    *logCapture
	secrets map[string]string // row name -> secret ("" for anonymous rows)
	// accessors of the row tokens, and the IDs placeholders stand for.
	accessors    map[string]string
	expiredID    string
	recordID     string
	scaleRoleID  string
	scratchToken string
	scratchRole  string
	scratchRule  string
	revision     int
	// deploymentID is the deployment of "web" the deployment routes act on, deploymentAlloc
	// its healthy canary (deployment_endpoint_test.go).
	deploymentID    string
	deploymentAlloc string
	deployments     int
}

func newMatrixFixture(t *testing.T, rows []matrixRow) *matrixFixture {
	t.Helper()
	ta, root, logs := newLoggedACLAgent(t, func(c *Config) {
		c.ACL.TokenMinExpirationTTL = matrixMinTTL
		c.EnableDebug = true
	})
	f := &matrixFixture{
		ta: ta, root: root, mgmt: ta.Client(root), logs: logs,
		http:      &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
		secrets:   map[string]string{},
		accessors: map[string]string{},
	}
	t.Cleanup(f.http.CloseIdleConnections)

	// A purge record of job "web", then "web" again with two versions.
	jobs := f.mgmt.Jobs()
	_, _, err := jobs.Register(testJob("web"), nil)
	must.NoError(t, err)
	_, _, err = jobs.DeregisterOpts("web", &api.DeregisterOptions{Purge: true}, nil)
	must.NoError(t, err)
	records, err := ta.Server().State().PurgeRecords(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, records)
	f.recordID = records[0].ID
	f.resetJob(t)

	var expiry *time.Time
	for _, row := range rows {
		switch {
		case row.anonymous:
			f.secrets[row.name] = ""
			continue
		case row.management:
			tok, _, err := f.mgmt.ACLTokens().Create(&api.ACLToken{Name: "row-" + row.name, Type: "management"}, nil)
			must.NoError(t, err)
			f.secrets[row.name], f.accessors[row.name] = tok.SecretID, tok.AccessorID
			continue
		}
		policy := "row-" + row.name
		mustUpsertPolicy(t, f.mgmt, policy, row.rules)
		req := &api.ACLToken{Name: "row-" + row.name, Type: "client", Policies: []string{policy}}
		if row.viaRole {
			role, _, err := f.mgmt.ACLRoles().Create(&api.ACLRole{
				Name: policy, Policies: []*api.ACLRolePolicyLink{{Name: policy}},
			}, nil)
			must.NoError(t, err)
			f.scaleRoleID = role.ID
			req.Policies = nil
			req.Roles = []*api.ACLTokenRoleLink{{ID: role.ID}}
		}
		if row.expired {
			req.ExpirationTTL = matrixMinTTL + 50*time.Millisecond
		}
		tok, _, err := f.mgmt.ACLTokens().Create(req, nil)
		must.NoError(t, err)
		f.secrets[row.name], f.accessors[row.name] = tok.SecretID, tok.AccessorID
		if row.expired {
			must.NotNil(t, tok.ExpirationTime)
			expiry = tok.ExpirationTime
			f.expiredID = tok.AccessorID
		}
		if row.deleted {
			_, err := f.mgmt.ACLTokens().Delete(tok.AccessorID, nil)
			must.NoError(t, err)
		}
	}
	if expiry != nil {
		waitUntil(t, 5*time.Second, "the expired row's token to expire", func() bool { return time.Now().After(*expiry) })
	}
	return f
}

// runCell sends one request as one row and checks the verdict.
func (f *matrixFixture) runCell(t *testing.T, ep matrixEndpoint, row matrixRow, wantAllowed bool) {
	f.setAnonymousPolicy(t, row)
	f.resetJob(t)
	if ep.setup != nil {
		ep.setup(t, f)
	}
	path, body := f.expand(t, ep.path), f.expand(t, ep.body)
	secret := f.secrets[row.name]

	store := f.ta.Server().State()
	beforeTables := tableIndexes(t, store)
	beforeJob := jobFingerprint(t, store)

	status, answer := f.do(t, ep.method, path, body, secret, ep.stream)

	if wantAllowed {
		want := ep.okStatus
		if want == 0 {
			want = http.StatusOK
		}
		must.Eq(t, want, status, must.Sprintf("%s %s as %s: %s", ep.method, path, row.name, answer))
		if ep.check != nil {
			ep.check(t, f)
		}
		return
	}

	must.Eq(t, http.StatusForbidden, status, must.Sprintf("%s %s as %s: %s", ep.method, path, row.name, answer))
	must.StrHasPrefix(t, "Permission denied", answer)
	if secret != "" {
		must.StrNotContains(t, answer, secret)
	}
	// A refusal changes nothing: not the job, not any table.
	must.Eq(t, beforeJob, jobFingerprint(t, store))
	afterTables := tableIndexes(t, store)
	if row.expired {
		// The leader reaps expired tokens on its own schedule; that one write may land
		// during the cell and is not the request's doing.
		if changed := changedTables(beforeTables, afterTables); len(changed) == 1 && changed[0] == "acl_token" {
			tok, err := store.ACLTokenByAccessorID(nil, f.expiredID)
			must.NoError(t, err)
			must.Nil(t, tok, must.Sprint("acl_token changed during a refused request, but not by the reaper"))
			beforeTables["acl_token"] = afterTables["acl_token"]
		}
	}
	must.Eq(t, beforeTables, afterTables, must.Sprintf("a refused %s %s changed state", ep.method, path))
}

// do sends one request. A stream's body is not read when it is accepted: only the status
// line matters, and the request's short deadline ends the stream.
func (f *matrixFixture) do(t *testing.T, method, path, body, secret string, stream bool) (int, string) {
	t.Helper()
	timeout := 10 * time.Second
	if stream {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.ta.URL()+path, rd)
	must.NoError(t, err)
	if secret != "" {
		req.Header.Set("X-Nomad-Token", secret)
	}
	resp, err := f.http.Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	if stream && resp.StatusCode == http.StatusOK {
		return resp.StatusCode, ""
	}
	raw, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	return resp.StatusCode, string(raw)
}

var placeholderRe = regexp.MustCompile(`\{[a-zA-Z]+\}`)

// expand fills the placeholders of a path or body from the current state.
func (f *matrixFixture) expand(t *testing.T, s string) string {
	t.Helper()
	return placeholderRe.ReplaceAllStringFunc(s, func(ph string) string {
		switch ph {
		case "{eval}":
			evals, err := f.ta.Server().State().EvalsByJob(nil, structs.DefaultNamespace, "web")
			must.NoError(t, err)
			must.SliceNotEmpty(t, evals)
			return evals[0].ID
		case "{record}":
			return f.recordID
		case "{deployment}":
			return f.deploymentID
		case "{depAlloc}":
			return f.deploymentAlloc
		case "{readToken}":
			return f.accessors[rowRead]
		case "{scratchToken}":
			return f.scratchToken
		case "{scaleRole}":
			return f.scaleRoleID
		case "{scratchRole}":
			return f.scratchRole
		case "{scratchRule}":
			return f.scratchRule
		case "{prevVersion}":
			versions, err := f.ta.Server().State().JobVersionsByID(nil, structs.DefaultNamespace, "web")
			must.NoError(t, err)
			must.Greater(t, 1, len(versions), must.Sprint("revert needs an earlier version"))
			return strconv.FormatUint(versions[1].Version, 10)
		}
		t.Fatalf("unknown placeholder %s", ph)
		return ""
	})
}

// setAnonymousPolicy makes the `anonymous` policy what the row needs: an anonymous row's
// rules, or none at all for every other row.
func (f *matrixFixture) setAnonymousPolicy(t *testing.T, row matrixRow) {
	t.Helper()
	want := ""
	if row.anonymous {
		want = row.rules
	}
	cur, err := f.ta.Server().State().ACLPolicyByName(nil, structs.AnonymousPolicyName)
	must.NoError(t, err)
	switch {
	case want == "" && cur != nil:
		_, err := f.mgmt.ACLPolicies().Delete(structs.AnonymousPolicyName, nil)
		must.NoError(t, err)
	case want != "" && (cur == nil || cur.Rules != want):
		mustUpsertPolicy(t, f.mgmt, structs.AnonymousPolicyName, want)
	}
}

// resetJob makes job "web" exist, running, with at least two versions (for revert).
func (f *matrixFixture) resetJob(t *testing.T) {
	t.Helper()
	store := f.ta.Server().State()
	for {
		job, err := store.JobByID(nil, structs.DefaultNamespace, "web")
		must.NoError(t, err)
		versions, err := store.JobVersionsByID(nil, structs.DefaultNamespace, "web")
		must.NoError(t, err)
		if job != nil && !job.Stop && len(versions) >= 2 {
			return
		}
		f.revision++
		spec := testJob("web")
		spec.Meta = map[string]string{"revision": strconv.Itoa(f.revision)}
		_, _, err = f.mgmt.Jobs().Register(spec, nil)
		must.NoError(t, err)
	}
}

func (f *matrixFixture) job(t *testing.T) *structs.Job {
	t.Helper()
	job, err := f.ta.Server().State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	return job
}

// setGoldenTag puts the tag "golden" on the latest version of "web", or takes it off every
// version.
func (f *matrixFixture) setGoldenTag(t *testing.T, want bool) {
	t.Helper()
	versions, err := f.ta.Server().State().JobVersionsByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	has := slices.ContainsFunc(versions, func(v *structs.Job) bool {
		return v.VersionTag != nil && v.VersionTag.Name == "golden"
	})
	switch {
	case want && !has:
		_, err := f.mgmt.Jobs().TagVersion("web", versions[0].Version, "golden", "", nil)
		must.NoError(t, err)
	case !want && has:
		_, err := f.mgmt.Jobs().UntagVersion("web", "golden", nil)
		must.NoError(t, err)
	}
}

func (f *matrixFixture) setScratchNamespace(t *testing.T, want bool) {
	t.Helper()
	cur, err := f.ta.Server().State().NamespaceByName(nil, "scratch")
	must.NoError(t, err)
	switch {
	case want && cur == nil:
		_, err := f.mgmt.Namespaces().Register(&api.Namespace{Name: "scratch"}, nil)
		must.NoError(t, err)
	case !want && cur != nil:
		_, err := f.mgmt.Namespaces().Delete("scratch", nil)
		must.NoError(t, err)
	}
}

func (f *matrixFixture) ensureScratchToken(t *testing.T) {
	t.Helper()
	if f.scratchToken != "" {
		tok, err := f.ta.Server().State().ACLTokenByAccessorID(nil, f.scratchToken)
		must.NoError(t, err)
		if tok != nil {
			return
		}
	}
	tok, _, err := f.mgmt.ACLTokens().Create(&api.ACLToken{Name: "scratch", Type: "management"}, nil)
	must.NoError(t, err)
	f.scratchToken = tok.AccessorID
}

func (f *matrixFixture) ensureScratchRole(t *testing.T) {
	t.Helper()
	role, err := f.ta.Server().State().ACLRoleByName(nil, "scratch")
	must.NoError(t, err)
	if role == nil {
		created, _, err := f.mgmt.ACLRoles().Create(&api.ACLRole{
			Name: "scratch", Policies: []*api.ACLRolePolicyLink{{Name: "row-write"}},
		}, nil)
		must.NoError(t, err)
		f.scratchRole = created.ID
		return
	}
	f.scratchRole = role.ID
}

func (f *matrixFixture) deleteRoleNamed(t *testing.T, name string) {
	t.Helper()
	role, err := f.ta.Server().State().ACLRoleByName(nil, name)
	must.NoError(t, err)
	if role != nil {
		_, err := f.mgmt.ACLRoles().Delete(role.ID, nil)
		must.NoError(t, err)
	}
}

// tableIndexes returns the index at which each table last changed: together they say
// whether anything at all was written.
func tableIndexes(t *testing.T, store *state.StateStore) map[string]uint64 {
	t.Helper()
	iter, err := store.ReadTxn().Get("index", "id")
	must.NoError(t, err)
	out := map[string]uint64{}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		e := raw.(*state.IndexEntry)
		out[e.Key] = e.Value
	}
	must.MapNotEmpty(t, out)
	return out
}

func changedTables(before, after map[string]uint64) []string {
	var out []string
	for k, v := range after {
		if before[k] != v {
			out = append(out, k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// jobFingerprint is what a refused write must leave as it was: whether "web" exists, its
// version, stop flag and modify indexes.
func jobFingerprint(t *testing.T, store *state.StateStore) string {
	t.Helper()
	job, err := store.JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	if job == nil {
		return "absent"
	}
	return fmt.Sprintf("version=%d stop=%t modify=%d jobModify=%d", job.Version, job.Stop, job.ModifyIndex, job.JobModifyIndex)
}

// TestACLMatrix_CoversEveryRoute reads every s.handle(mux, pattern, methods{...}) call of the
// package and fails for any handler that no matrix endpoint reaches, so a new route cannot
// ship without its ACL matrix rows.
func TestACLMatrix_CoversEveryRoute(t *testing.T) {
	routes := registeredRoutes(t)
	must.MapNotEmpty(t, routes)

	mux := http.NewServeMux()
	for pattern := range routes {
		mux.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
	}
	covered := map[string]bool{}
	for _, ep := range allMatrixEndpoints() {
		path := placeholderRe.ReplaceAllString(ep.path, "x")
		_, pattern := mux.Handler(httptest.NewRequest(ep.method, path, nil))
		handler := routes[pattern][ep.method]
		must.NotEq(t, "", handler, must.Sprintf("matrix endpoint %q (%s %s) reaches no route", ep.name, ep.method, path))
		covered[pattern+" "+handler] = true
	}
	for pattern, byMethod := range routes {
		for method, handler := range byMethod {
			must.True(t, covered[pattern+" "+handler],
				must.Sprintf("route %s %s (%s) has no ACL matrix endpoint", method, pattern, handler))
		}
	}
}

// registeredRoutes maps each pattern given to s.handle in the package's non-test files to
// its methods and their handler names.
func registeredRoutes(t *testing.T) map[string]map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	must.NoError(t, err)
	fset := token.NewFileSet()
	routes := map[string]map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		must.NoError(t, err)
		file, err := parser.ParseFile(fset, name, src, 0)
		must.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 3 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "handle" {
				return true
			}
			lit, ok := call.Args[1].(*ast.BasicLit)
			must.True(t, ok && lit.Kind == token.STRING, must.Sprintf("%s: route pattern is not a literal", fset.Position(call.Pos())))
			pattern, err := strconv.Unquote(lit.Value)
			must.NoError(t, err)
			ms, ok := call.Args[2].(*ast.CompositeLit)
			must.True(t, ok, must.Sprintf("%s: methods are not a literal", fset.Position(call.Pos())))
			routes[pattern] = map[string]string{}
			for _, elt := range ms.Elts {
				kv := elt.(*ast.KeyValueExpr)
				method, err := strconv.Unquote(kv.Key.(*ast.BasicLit).Value)
				must.NoError(t, err)
				handler := string(src[fset.Position(kv.Value.Pos()).Offset:fset.Position(kv.Value.End()).Offset])
				routes[pattern][method] = handler
			}
			return true
		})
	}
	return routes
}
