package agent

import (
	"slices"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Node pools are governed by node_pool rules, which no row of matrixRows holds.
const (
	rowPoolReader = "node-pool-reader"
	rowPoolWriter = "node-pool-writer"
)

var matrixNodePoolRows = slices.Concat(matrixRows, []matrixRow{
	{name: rowPoolReader, rules: `node_pool "matrix" { policy = "read" }`},
	{name: rowPoolWriter, rules: `node_pool "matrix" { policy = "write" }`},
})

func ensureMatrixPool(t *testing.T, f *matrixFixture) {
	t.Helper()
	_, err := f.mgmt.NodePools().Register(&api.NodePool{Name: "matrix"}, nil)
	must.NoError(t, err)
}

func matrixNodePoolEndpoints() []matrixEndpoint {
	allowRead := []string{rowPoolReader, rowPoolWriter, rowManagement}
	allowWrite := []string{rowPoolWriter, rowManagement}
	return []matrixEndpoint{
		// Filtered per pool: every caller that resolves gets a (possibly empty) list.
		{name: "node pools list", method: "GET", path: "/v1/node/pools", allow: without(rowNames(matrixNodePoolRows), rowExpired, rowDeleted)},
		{name: "node pool register", method: "PUT", path: "/v1/node/pools", body: `{"Name":"matrix"}`, allow: allowWrite},
		{name: "node pool register (POST)", method: "POST", path: "/v1/node/pools", body: `{"Name":"matrix"}`, allow: allowWrite},
		{name: "node pool read", method: "GET", path: "/v1/node/pool/matrix", setup: ensureMatrixPool, allow: allowRead},
		{name: "node pool update", method: "PUT", path: "/v1/node/pool/matrix", body: `{"Description":"d"}`, allow: allowWrite},
		{name: "node pool update (POST)", method: "POST", path: "/v1/node/pool/matrix", body: `{"Description":"d"}`, allow: allowWrite},
		{name: "node pool delete", method: "DELETE", path: "/v1/node/pool/matrix", setup: ensureMatrixPool, allow: allowWrite},
		// Jobs are filtered by list-jobs per namespace; nodes need node read as well.
		{name: "node pool jobs", method: "GET", path: "/v1/node/pool/matrix/jobs", setup: ensureMatrixPool, allow: allowRead},
		{name: "node pool nodes", method: "GET", path: "/v1/node/pool/matrix/nodes", setup: ensureMatrixPool, allow: allowManagement},
	}
}

func TestACLMatrix_NodePools(t *testing.T) {
	runACLMatrix(t, matrixNodePoolEndpoints(), matrixNodePoolRows)
}
