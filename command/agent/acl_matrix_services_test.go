package agent

import (
	"testing"

	"github.com/nomadfork/nomad/nomad/nomadtest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

const (
	matrixServiceAlloc = "00000000-0000-4000-a000-000000000001"
	matrixServiceID    = "_nomad-task-" + matrixServiceAlloc + "-web-matrix-api-http"
)

// ensureMatrixService places an allocation of "web" and registers service "matrix-api" of it,
// unless both are there already.
func ensureMatrixService(t *testing.T, f *matrixFixture) {
	t.Helper()
	srv := f.ta.Server()
	alloc, err := srv.State().AllocByID(nil, matrixServiceAlloc)
	must.NoError(t, err)
	if alloc == nil {
		nomadtest.PlaceAllocs(t, srv, f.job(t), &structs.Allocation{ID: matrixServiceAlloc, Name: structs.AllocName("web", "web", 0),
			TaskGroup: "web", NodeID: "matrix-node", ClientStatus: structs.AllocClientStatusRunning})
	}
	svc, err := srv.State().ServiceRegistrationByID(nil, matrixServiceID)
	must.NoError(t, err)
	if svc == nil {
		nomadtest.UpsertServiceRegistrations(t, srv, &structs.ServiceRegistration{
			ID: matrixServiceID, ServiceName: "matrix-api", Namespace: structs.DefaultNamespace, NodeID: "matrix-node",
			JobID: "web", AllocID: matrixServiceAlloc, Address: "127.0.0.1", Port: 8080,
		})
	}
}

func matrixServiceEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "services list", method: "GET", path: "/v1/services", setup: ensureMatrixService, allow: allowReadJob},
		{name: "service read", method: "GET", path: "/v1/service/matrix-api", setup: ensureMatrixService, allow: allowReadJob},
		{name: "service read (choose)", method: "GET", path: "/v1/service/matrix-api?choose=1|k", setup: ensureMatrixService, allow: allowReadJob},
		// submit-job or delete-service-registration, which no other row holds.
		{
			name: "service delete", method: "DELETE", path: "/v1/service/matrix-api/" + matrixServiceID,
			setup: ensureMatrixService, allow: allowSubmit,
			check: func(t *testing.T, f *matrixFixture) {
				svc, err := f.ta.Server().State().ServiceRegistrationByID(nil, matrixServiceID)
				must.NoError(t, err)
				must.Nil(t, svc)
			},
		},
		{name: "job services", method: "GET", path: "/v1/job/web/services", setup: ensureMatrixService, allow: allowReadJob},
		{name: "allocation services", method: "GET", path: "/v1/allocation/" + matrixServiceAlloc + "/services",
			setup: ensureMatrixService, allow: allowReadJob},
	}
}

func TestACLMatrix_Services(t *testing.T) {
	runACLMatrix(t, matrixServiceEndpoints(), matrixRows)
}
