package agent

import (
	"testing"
)

// allowNodeRead is node read access, which management has too.
var allowNodeRead = []string{rowNodeRead, rowManagement}

// matrixAllocAndNodeEndpoints are the ACL matrix rows of the allocation and node routes. The
// matrix agent runs no client, so the reads of one allocation or node answer 404 to whoever
// may ask, and 403 to everyone else.
func matrixAllocAndNodeEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "allocations list", method: "GET", path: "/v1/allocations", allow: allowReadJob},
		{name: "allocation read", method: "GET", path: "/v1/allocation/no-such-alloc", allow: allowReadJob, okStatus: 404},
		{name: "nodes list", method: "GET", path: "/v1/nodes", allow: allowNodeRead},
		{name: "node read", method: "GET", path: "/v1/node/no-such-node", allow: allowNodeRead, okStatus: 404},
		{name: "node allocations", method: "GET", path: "/v1/node/no-such-node/allocations", allow: allowNodeRead},
	}
}

func TestACLMatrix_AllocsAndNodes(t *testing.T) {
	runACLMatrix(t, matrixAllocAndNodeEndpoints(), matrixRows)
}
