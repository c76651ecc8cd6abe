package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
)

// The in-package twins of nomadtest: this package's tests cannot import nomadtest (it imports
// this package), and go test would take a TestXxx name for a malformed test, hence lower case.

func testServer(t testing.TB, cb func(*Config)) *Server {
	t.Helper()
	return HarnessServer(t, cb)
}

func testACLServer(t testing.TB, cb func(*Config)) (*Server, string) {
	t.Helper()
	return HarnessACLServer(t, cb)
}

func testPlaceAllocs(t testing.TB, srv *Server, job *structs.Job, allocs ...*structs.Allocation) {
	t.Helper()
	HarnessPlaceAllocs(t, srv, job, allocs...)
}

func testUpsertDeployment(t testing.TB, srv *Server, job *structs.Job, d *structs.Deployment, allocs ...*structs.Allocation) {
	t.Helper()
	HarnessUpsertDeployment(t, srv, job, d, allocs...)
}

func testUpsertServiceRegistrations(t testing.TB, srv *Server, svcs ...*structs.ServiceRegistration) {
	t.Helper()
	HarnessUpsertServiceRegistrations(t, srv, svcs...)
}
