package agent

import (
	"slices"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// Variables are governed by path rules, which no row of matrixRows holds: two more rows
// join the shared ones for these routes only.
const (
	rowVarReader = "variables-reader"
	rowVarWriter = "variables-writer"
)

var matrixVariableRows = slices.Concat(matrixRows, []matrixRow{
	{name: rowVarReader, rules: "namespace \"default\" {\n  variables {\n    path \"matrix/*\" {\n      capabilities = [\"read\"]\n    }\n  }\n}\n"},
	{name: rowVarWriter, rules: "namespace \"default\" {\n  variables {\n    path \"matrix/*\" {\n      capabilities = [\"write\", \"destroy\"]\n    }\n  }\n}\n"},
})

// ensureMatrixVariable puts variable matrix/a in place with the management token.
func ensureMatrixVariable(t *testing.T, f *matrixFixture) {
	t.Helper()
	_, _, err := f.mgmt.Variables().Update(&api.Variable{Path: "matrix/a", Items: map[string]string{"k": "v"}}, nil)
	must.NoError(t, err)
}

func matrixVariableEndpoints() []matrixEndpoint {
	allowVarRead := []string{rowVarReader, rowManagement}
	allowVarWrite := []string{rowVarWriter, rowManagement}
	return []matrixEndpoint{
		// Filtered per path: every caller that resolves gets a (possibly empty) list.
		{name: "variables list", method: "GET", path: "/v1/vars", allow: without(rowNames(matrixVariableRows), rowExpired, rowDeleted)},
		{name: "variable read", method: "GET", path: "/v1/var/matrix/a", setup: ensureMatrixVariable, allow: allowVarRead},
		{name: "variable write", method: "PUT", path: "/v1/var/matrix/a", body: `{"Items":{"k":"w"}}`, allow: allowVarWrite},
		{
			name: "variable delete", method: "DELETE", path: "/v1/var/matrix/a", setup: ensureMatrixVariable,
			allow: allowVarWrite, okStatus: 204,
		},
	}
}

func TestACLMatrix_Variables(t *testing.T) {
	runACLMatrix(t, matrixVariableEndpoints(), matrixVariableRows)
}
