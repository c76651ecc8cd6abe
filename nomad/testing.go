package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestServer starts an in-memory single-server cluster for tests and waits for it to lead.
// cb may change the config first. The scheduling worker is off unless cb sets NumSchedulers,
// so tests of other writes see only their own.
func TestServer(t testing.TB, cb func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.NodeName = t.Name()
	cfg.NumSchedulers = 0
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Error, Output: testWriter{t}})
	if cb != nil {
		cb(cfg)
	}
	srv, err := NewServer(cfg)
	must.NoError(t, err)
	t.Cleanup(func() { _ = srv.Shutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must.NoError(t, srv.WaitForLeader(ctx))
	// Leadership is known before the leader can commit; wait until a write goes through.
	for !srv.IsLeader() {
		select {
		case <-ctx.Done():
			t.Fatalf("server never became leader")
		case <-time.After(10 * time.Millisecond):
		}
	}
	must.NoError(t, srv.raft.Barrier(5*time.Second).Error())
	// The new leader writes the first root key on its own; wait for it, so that tests which
	// count log entries or table indexes see only their own writes.
	for !hasActiveRootKey(srv) {
		select {
		case <-ctx.Done():
			t.Fatalf("the leader never wrote its first root key")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return srv
}

func hasActiveRootKey(srv *Server) bool {
	keys, err := srv.State().RootKeys(nil)
	if err != nil {
		return false
	}
	for _, k := range keys {
		if k.State == structs.RootKeyStateActive {
			return true
		}
	}
	return false
}

// TestACLServer starts a server with ACLs on and returns it with a bootstrap management
// token's secret.
func TestACLServer(t testing.TB, cb func(*Config)) (*Server, string) {
	t.Helper()
	srv := TestServer(t, func(c *Config) {
		c.ACLEnabled = true
		if cb != nil {
			cb(c)
		}
	})
	var reply structs.ACLTokenUpsertResponse
	must.NoError(t, srv.Endpoints.ACL.Bootstrap(&BootstrapRequest{}, &reply))
	return srv, reply.Tokens[0].SecretID
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// TestPlaceAllocs writes allocations of job through Raft as a plan would, for tests that need
// allocations without running a client and scheduler. Each allocation gets job's namespace,
// ID and spec, and ClientStatus pending unless it sets one.
func TestPlaceAllocs(t testing.TB, srv *Server, job *structs.Job, allocs ...*structs.Allocation) {
	t.Helper()
	for _, a := range allocs {
		a.Namespace, a.JobID = job.Namespace, job.ID
		if a.ClientStatus == "" {
			a.ClientStatus = structs.AllocClientStatusPending
		}
		if a.DesiredStatus == "" {
			a.DesiredStatus = structs.AllocDesiredStatusRun
		}
	}
	_, err := srv.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		Job: job, AllocsPlaced: allocs, UpdatedAt: time.Now().UnixNano(),
	})
	must.NoError(t, err)
}

// TestUpsertDeployment writes a deployment of job through Raft as a plan would, with allocs
// placed in it (each gets the deployment's ID, job's namespace and ID, and status pending
// unless set), for tests that need a deployment without running a client and scheduler.
func TestUpsertDeployment(t testing.TB, srv *Server, job *structs.Job, d *structs.Deployment, allocs ...*structs.Allocation) {
	t.Helper()
	d.Namespace, d.JobID, d.JobVersion, d.JobCreateIndex = job.Namespace, job.ID, job.Version, job.CreateIndex
	for _, a := range allocs {
		a.Namespace, a.JobID, a.DeploymentID = job.Namespace, job.ID, d.ID
		if a.ClientStatus == "" {
			a.ClientStatus = structs.AllocClientStatusPending
		}
		if a.DesiredStatus == "" {
			a.DesiredStatus = structs.AllocDesiredStatusRun
		}
	}
	_, err := srv.raftApply(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		Job: job, Deployment: d, AllocsPlaced: allocs, UpdatedAt: time.Now().UnixNano(),
	})
	must.NoError(t, err)
}

// TestUpsertServiceRegistrations writes registrations through Raft as a client's upsert
// would, for tests that need them without a running client. Each must name an allocation
// placed on its NodeID (the node itself need not be registered).
func TestUpsertServiceRegistrations(t testing.TB, srv *Server, svcs ...*structs.ServiceRegistration) {
	t.Helper()
	_, err := srv.raftApply(structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{Services: svcs})
	must.NoError(t, err)
}
