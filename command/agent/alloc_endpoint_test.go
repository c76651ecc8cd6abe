package agent

import (
	"net/http"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad/nomadtest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// allowNodeRead is node read access, which node write and management have too.
var allowNodeRead = []string{rowNodeRead, rowNodeWrite, rowManagement}

// matrixAllocAndNodeEndpoints are the ACL matrix rows of the allocation and node routes. The
// matrix agent runs no client, so the reads of one allocation or node answer 404 to whoever
// may ask, and 403 to everyone else.
func matrixAllocAndNodeEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "allocations list", method: "GET", path: "/v1/allocations", allow: allowReadJob},
		{name: "allocation read", method: "GET", path: "/v1/allocation/no-such-alloc", allow: allowReadJob, okStatus: 404},
		// alloc-lifecycle, which `policy = "write"` grants.
		{name: "allocation stop", method: "PUT", path: "/v1/allocation/no-such-alloc/stop", allow: []string{rowWrite, rowManagement}, okStatus: 404},
		{name: "nodes list", method: "GET", path: "/v1/nodes", allow: allowNodeRead},
		{name: "node read", method: "GET", path: "/v1/node/no-such-node", allow: allowNodeRead, okStatus: 404},
		{name: "node allocations", method: "GET", path: "/v1/node/no-such-node/allocations", allow: allowNodeRead},
	}
}

func TestACLMatrix_AllocsAndNodes(t *testing.T) {
	runACLMatrix(t, matrixAllocAndNodeEndpoints(), matrixRows)
}

// A caller that may read allocations in the namespace it asks in, but not in the allocation's,
// gets a 403 that names the allocation's namespace: the one whose policy is missing.
func TestSecurity_AllocReadDeniedNamesAllocNamespace(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	rc := ta.Client(root)
	_, err := rc.Namespaces().Register(&api.Namespace{Name: "other"}, nil)
	must.NoError(t, err)
	job := testJob("elsewhere")
	job.Namespace = new("other")
	_, _, err = rc.Jobs().Register(job, nil)
	must.NoError(t, err)
	stored, err := ta.Server().State().JobByID(nil, "other", "elsewhere")
	must.NoError(t, err)
	alloc := &structs.Allocation{ID: "6f1ad1d4-6bd4-4d86-9f2a-6c1f5a1c0a01", Name: "elsewhere.web[0]", TaskGroup: "web"}
	nomadtest.PlaceAllocs(t, ta.Server(), stored, alloc)

	reader := clientToken(t, ta, root, "default-reader", `namespace "default" { policy = "read" }`)
	res := doHTTP(t, ta, http.MethodGet, "/v1/allocation/"+alloc.ID, nil, http.Header{"X-Nomad-Token": {reader.SecretID}})
	must.Eq(t, http.StatusForbidden, res.status)
	must.StrHasPrefix(t, "Permission denied", res.body)
	must.StrContains(t, res.body, `namespace "other"`)
	must.StrNotContains(t, res.body, `namespace "default"`)

	// Whoever may read it there gets it.
	res = doHTTP(t, ta, http.MethodGet, "/v1/allocation/"+alloc.ID+"?namespace=other", nil, http.Header{"X-Nomad-Token": {root}})
	must.Eq(t, http.StatusOK, res.status)
}

// An allocation the servers replaced names its replacement in the API's JSON, as the official
// client reads it (NextAllocation), once the plan entry that placed the replacement applied.
func TestAllocRead_NamesReplacement(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	job, err := ta.Server().State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	prev := &structs.Allocation{ID: "0b6a3f1e-2c44-4d5e-8f90-1a2b3c4d5e01", Name: "web.web[0]", TaskGroup: "web"}
	nomadtest.PlaceAllocs(t, ta.Server(), job, prev)
	got, _, err := c.Allocations().Info(prev.ID, nil)
	must.NoError(t, err)
	must.Eq(t, "", got.NextAllocation)

	next := &structs.Allocation{ID: "0b6a3f1e-2c44-4d5e-8f90-1a2b3c4d5e02", Name: "web.web[0]", TaskGroup: "web", PreviousAllocation: prev.ID}
	nomadtest.PlaceAllocs(t, ta.Server(), job, next)
	got, _, err = c.Allocations().Info(prev.ID, nil)
	must.NoError(t, err)
	must.Eq(t, next.ID, got.NextAllocation)
	replacement, _, err := c.Allocations().Info(next.ID, nil)
	must.NoError(t, err)
	must.Eq(t, prev.ID, replacement.PreviousAllocation)
	must.Eq(t, replacement.CreateIndex, got.ModifyIndex)
}
