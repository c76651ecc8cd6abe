package nomad

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/structs"
)

// HarnessT is the part of testing.TB the server harness needs. The harness takes this rather
// than testing.TB so that the nomad binary, which links this package, does not link the
// testing package; the test-only packages (nomadtest, and this package's own tests) pass
// their *testing.T.
type HarnessT interface {
	Helper()
	Name() string
	Log(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// HarnessServer starts an in-memory single-server cluster for tests and waits until it leads
// and has written its first root key. cb may change the config first. The scheduling worker
// is off unless cb sets NumSchedulers, so tests of other writes see only their own.
func HarnessServer(t HarnessT, cb func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.NodeName = t.Name()
	cfg.NumSchedulers = 0
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Error, Output: harnessLogWriter{t}})
	if cb != nil {
		cb(cfg)
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("starting the test server: %v", err)
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.WaitForLeader(ctx); err != nil {
		t.Fatalf("waiting for a leader: %v", err)
	}
	// Leadership is known before the leader can commit; wait until a write goes through.
	for !srv.IsLeader() {
		select {
		case <-ctx.Done():
			t.Fatalf("server never became leader")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := srv.raft.Barrier(5 * time.Second).Error(); err != nil {
		t.Fatalf("raft barrier on the new leader: %v", err)
	}
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

// HarnessACLServer starts a server with ACLs on and returns it with a bootstrap management
// token's secret.
func HarnessACLServer(t HarnessT, cb func(*Config)) (*Server, string) {
	t.Helper()
	srv := HarnessServer(t, func(c *Config) {
		c.ACLEnabled = true
		if cb != nil {
			cb(c)
		}
	})
	var reply structs.ACLTokenUpsertResponse
	if err := srv.Endpoints.ACL.Bootstrap(&BootstrapRequest{}, &reply); err != nil {
		t.Fatalf("bootstrapping ACLs: %v", err)
	}
	if len(reply.Tokens) == 0 {
		t.Fatalf("ACL bootstrap returned no token")
	}
	return srv, reply.Tokens[0].SecretID
}

// harnessLogWriter sends server logs to the test's log, shown only for failing or -v tests.
type harnessLogWriter struct{ t HarnessT }

func (w harnessLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// HarnessPlaceAllocs writes allocations of job through Raft as a plan would, for tests that
// need allocations without running a client and scheduler. Each allocation gets job's
// namespace, ID and spec, and ClientStatus pending unless it sets one.
func HarnessPlaceAllocs(t HarnessT, srv *Server, job *structs.Job, allocs ...*structs.Allocation) {
	t.Helper()
	for _, a := range allocs {
		a.Namespace, a.JobID = job.Namespace, job.ID
		defaultHarnessAllocStatus(a)
	}
	harnessApply(t, srv, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		Job: job, AllocsPlaced: allocs, UpdatedAt: time.Now().UnixNano(),
	})
}

// HarnessUpsertDeployment writes a deployment of job through Raft as a plan would, with
// allocs placed in it (each gets the deployment's ID, job's namespace and ID, and status
// pending unless set), for tests that need a deployment without running a client and
// scheduler.
func HarnessUpsertDeployment(t HarnessT, srv *Server, job *structs.Job, d *structs.Deployment, allocs ...*structs.Allocation) {
	t.Helper()
	d.Namespace, d.JobID, d.JobVersion, d.JobCreateIndex = job.Namespace, job.ID, job.Version, job.CreateIndex
	for _, a := range allocs {
		a.Namespace, a.JobID, a.DeploymentID = job.Namespace, job.ID, d.ID
		defaultHarnessAllocStatus(a)
	}
	harnessApply(t, srv, structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		Job: job, Deployment: d, AllocsPlaced: allocs, UpdatedAt: time.Now().UnixNano(),
	})
}

// HarnessUpsertServiceRegistrations writes registrations through Raft as a client's upsert
// would, for tests that need them without a running client. Each must name an allocation
// placed on its NodeID (the node itself need not be registered).
func HarnessUpsertServiceRegistrations(t HarnessT, srv *Server, svcs ...*structs.ServiceRegistration) {
	t.Helper()
	harnessApply(t, srv, structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{Services: svcs})
}

func defaultHarnessAllocStatus(a *structs.Allocation) {
	if a.ClientStatus == "" {
		a.ClientStatus = structs.AllocClientStatusPending
	}
	if a.DesiredStatus == "" {
		a.DesiredStatus = structs.AllocDesiredStatusRun
	}
}

func harnessApply(t HarnessT, srv *Server, msgType structs.MessageType, msg any) {
	t.Helper()
	if _, err := srv.raftApply(msgType, msg); err != nil {
		t.Fatalf("applying %v through raft: %v", msgType, err)
	}
}
