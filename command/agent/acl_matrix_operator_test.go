package agent

import "testing"

// matrixSchedulerConfigEndpoints: the scheduler configuration is behind operator read/write.
func matrixSchedulerConfigEndpoints() []matrixEndpoint {
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

func TestACLMatrix_SchedulerConfig(t *testing.T) {
	runACLMatrix(t, matrixSchedulerConfigEndpoints(), matrixRows)
}
