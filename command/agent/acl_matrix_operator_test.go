package agent

import (
	"slices"
	"testing"
)

// The scheduler configuration is behind operator read/write, which no row of matrixRows
// holds.
const (
	rowOperatorRead  = "operator-read"
	rowOperatorWrite = "operator-write"
)

var matrixOperatorRows = slices.Concat(matrixRows, []matrixRow{
	{name: rowOperatorRead, rules: `operator { policy = "read" }`},
	{name: rowOperatorWrite, rules: `operator { policy = "write" }`},
})

func matrixOperatorEndpoints() []matrixEndpoint {
	allowWrite := []string{rowOperatorWrite, rowManagement}
	return []matrixEndpoint{
		{name: "scheduler config read", method: "GET", path: "/v1/operator/scheduler/configuration",
			allow: []string{rowOperatorRead, rowOperatorWrite, rowManagement}},
		{name: "scheduler config write", method: "PUT", path: "/v1/operator/scheduler/configuration",
			body: `{"SchedulerAlgorithm":"binpack"}`, allow: allowWrite},
		{name: "scheduler config write (POST, cas)", method: "POST", path: "/v1/operator/scheduler/configuration?cas=0",
			body: `{"SchedulerAlgorithm":"binpack"}`, allow: allowWrite},
	}
}

func TestACLMatrix_Operator(t *testing.T) {
	runACLMatrix(t, matrixOperatorEndpoints(), matrixOperatorRows)
}
