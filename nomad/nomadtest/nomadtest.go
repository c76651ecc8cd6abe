// Package nomadtest starts in-memory servers for the tests of other packages. It lives apart
// from package nomad so that the nomad binary does not link the testing package.
package nomadtest

import (
	"testing"

	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// NewServer starts an in-memory single-server cluster, waits until it leads, and shuts it down
// when the test ends. cb may change the config first. The scheduling worker is off unless cb
// sets NumSchedulers, so a test sees only its own writes.
func NewServer(t testing.TB, cb func(*nomad.Config)) *nomad.Server {
	t.Helper()
	return nomad.HarnessServer(t, cb)
}

// NewACLServer starts a server with ACLs on and returns it with a bootstrap management
// token's secret.
func NewACLServer(t testing.TB, cb func(*nomad.Config)) (*nomad.Server, string) {
	t.Helper()
	return nomad.HarnessACLServer(t, cb)
}

// PlaceAllocs writes allocations of job through Raft as a plan would, for tests that need
// allocations without running a client and scheduler. Each allocation gets job's namespace,
// ID and spec, and ClientStatus pending unless it sets one.
func PlaceAllocs(t testing.TB, srv *nomad.Server, job *structs.Job, allocs ...*structs.Allocation) {
	t.Helper()
	nomad.HarnessPlaceAllocs(t, srv, job, allocs...)
}

// UpsertDeployment writes a deployment of job through Raft as a plan would, with allocs placed
// in it (each gets the deployment's ID, job's namespace and ID, and status pending unless set).
func UpsertDeployment(t testing.TB, srv *nomad.Server, job *structs.Job, d *structs.Deployment, allocs ...*structs.Allocation) {
	t.Helper()
	nomad.HarnessUpsertDeployment(t, srv, job, d, allocs...)
}

// UpsertServiceRegistrations writes registrations through Raft as a client's upsert would.
// Each must name an allocation placed on its NodeID (the node itself need not be registered).
func UpsertServiceRegistrations(t testing.TB, srv *nomad.Server, svcs ...*structs.ServiceRegistration) {
	t.Helper()
	nomad.HarnessUpsertServiceRegistrations(t, srv, svcs...)
}
