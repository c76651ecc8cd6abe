package client

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// fakeServers is an in-memory stand-in for the servers: tests set the node's allocations and
// read what the client reported.
type fakeServers struct {
	mu       sync.Mutex
	changed  chan struct{}
	index    uint64
	allocs   []*structs.Allocation
	nodes    []*structs.Node
	reports  map[string][]*structs.Allocation // every report, by alloc ID
	statuses int
	// unknownNode makes the next heartbeat answer 404, as a server that lost its state.
	unknownNode bool
	// services are the registrations the client holds, by ID.
	services map[string]*structs.ServiceRegistration
	// signErr is the answer to SignIdentities when set; signCalls counts the calls.
	signErr   error
	signCalls int
	// migrate answers MigrateAllocData when set, as the servers relaying to another node.
	migrate func(args *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error
}

func newFakeServers() *fakeServers {
	return &fakeServers{changed: make(chan struct{}), reports: map[string][]*structs.Allocation{}}
}

func (f *fakeServers) RegisterNode(args *structs.NodeRegisterRequest, reply *structs.NodeUpdateResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes = append(f.nodes, args.Node)
	reply.HeartbeatTTL = 20 * time.Millisecond
	return nil
}

func (f *fakeServers) UpdateNodeStatus(args *structs.NodeUpdateStatusRequest, reply *structs.NodeUpdateResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statuses++
	if f.unknownNode {
		f.unknownNode = false
		return structs.NotFound(structs.ErrNodeNotFound)
	}
	reply.HeartbeatTTL = 20 * time.Millisecond
	return nil
}

func (f *fakeServers) NodeAllocations(args *structs.NodeSpecificRequest, reply *structs.NodeAllocsResponse) error {
	timeout := time.After(args.MaxQueryTime)
	for {
		f.mu.Lock()
		index, allocs, changed := f.index, f.allocs, f.changed
		f.mu.Unlock()
		if index > args.MinQueryIndex {
			reply.Allocs, reply.Index = allocs, index
			return nil
		}
		select {
		case <-changed:
		case <-timeout:
			reply.Allocs, reply.Index = allocs, index
			return nil
		}
	}
}

func (f *fakeServers) UpdateAllocations(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range args.Alloc {
		f.reports[a.ID] = append(f.reports[a.ID], a)
	}
	return nil
}

func (f *fakeServers) UpsertServiceRegistrations(args *structs.ServiceRegistrationUpsertRequest, reply *structs.GenericResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.services == nil {
		f.services = map[string]*structs.ServiceRegistration{}
	}
	for _, s := range args.Services {
		f.services[s.ID] = s
	}
	return nil
}

// SignIdentities signs "jwt.<alloc>.<task>.<identity>" for every identity asked for, or
// answers signErr.
func (f *fakeServers) SignIdentities(args *structs.AllocIdentitiesRequest, reply *structs.AllocIdentitiesResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signCalls++
	if f.signErr != nil {
		return f.signErr
	}
	for _, r := range args.Identities {
		reply.SignedIdentities = append(reply.SignedIdentities, &structs.SignedWorkloadIdentity{
			WorkloadIdentityRequest: *r, JWT: "jwt." + r.AllocID + "." + r.TaskName + "." + r.IdentityName,
		})
	}
	return nil
}

func (f *fakeServers) DeleteServiceRegistration(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.GenericResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.services[args.ID]; !ok {
		return structs.NotFound(structs.ErrServiceRegistrationNotFound)
	}
	delete(f.services, args.ID)
	return nil
}

// serviceIDs are the IDs of the services registered with the fake, sorted.
func (f *fakeServers) serviceIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := []string{}
	for id := range f.services {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// SignNodeIdentity signs nothing: the fake has no keyring. The client retries quietly.
func (f *fakeServers) SignNodeIdentity(args *structs.NodeIdentitySignRequest, reply *structs.NodeIdentitySignResponse) error {
	return structs.NewErrCode(500, "no keyring in the fake servers")
}

func (f *fakeServers) MigrateAllocData(args *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error {
	f.mu.Lock()
	migrate := f.migrate
	f.mu.Unlock()
	if migrate == nil {
		return structs.NewErrCode(404, "allocation %s not found", args.AllocID)
	}
	return migrate(args, reply)
}

// setAllocs replaces the node's allocations, as a plan or purge would.
func (f *fakeServers) setAllocs(allocs ...*structs.Allocation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.allocs = allocs
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeServers) lastReport(id string) *structs.Allocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.reports[id]
	if len(r) == 0 {
		return nil
	}
	return r[len(r)-1]
}

func (f *fakeServers) reportCount(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reports[id])
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testClient(t *testing.T) (*Client, *fakeServers) {
	t.Helper()
	servers := newFakeServers()
	c, err := New(&Config{
		Name: "test", AllocDir: t.TempDir(), StateDir: t.TempDir(),
		Drivers:      []drivers.Driver{drivers.Mock{}, drivers.RawExec{}},
		MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
	}, servers)
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	select {
	case <-c.Registered():
	case <-time.After(5 * time.Second):
		t.Fatal("client never registered")
	}
	return c, servers
}

// testClientNoState is a client without a state directory: its tasks die with it.
func testClientNoState(t *testing.T) (*Client, *fakeServers) {
	t.Helper()
	servers := newFakeServers()
	c, err := New(&Config{
		Name: "test", AllocDir: t.TempDir(),
		Drivers:      []drivers.Driver{drivers.Mock{}, drivers.RawExec{}},
		MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
	}, servers)
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	<-c.Registered()
	return c, servers
}

func testAlloc(id, jobType string, tasks ...*api.Task) *structs.Allocation {
	job := &structs.Job{ID: "job", Name: "job", Namespace: "default", Type: jobType,
		TaskGroups: []*api.TaskGroup{{Name: new("g"), Tasks: tasks,
			RestartPolicy: &api.RestartPolicy{Attempts: new(0)}}}}
	return &structs.Allocation{ID: id, Name: "job.g[0]", Namespace: "default", JobID: "job", Job: job, TaskGroup: "g",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending, AllocModifyIndex: 1}
}

func mockTask(name string, config map[string]any) *api.Task {
	return &api.Task{Name: name, Driver: "mock_driver", Config: config}
}

func reportedStatus(s *fakeServers, id, want string) func() bool {
	return func() bool {
		r := s.lastReport(id)
		return r != nil && r.ClientStatus == want
	}
}

func TestClient_RegistersAndHeartbeats(t *testing.T) {
	c, s := testClient(t)
	s.mu.Lock()
	node := s.nodes[0]
	s.unknownNode = true
	s.mu.Unlock()
	must.Eq(t, c.NodeID(), node.ID)
	must.NotEq(t, "", node.SecretID)
	must.Eq(t, structs.NodeStatusReady, node.Status)
	must.True(t, node.HasDriver("mock_driver"))
	must.True(t, node.HasDriver("raw_exec"))
	must.Eq(t, "1", node.Attributes["driver.raw_exec"])

	// A server that forgot the node (404 on a heartbeat) gets it registered again.
	waitFor(t, "a second registration", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.nodes) == 2 && s.statuses >= 2
	})
	s.mu.Lock()
	must.Eq(t, node.ID, s.nodes[1].ID)
	s.mu.Unlock()
}

func TestClient_IdentitySurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := &Config{StateDir: dir}
	must.NoError(t, loadIdentity(cfg))
	again := &Config{StateDir: dir}
	must.NoError(t, loadIdentity(again))
	must.Eq(t, cfg.NodeID, again.NodeID)
	must.Eq(t, cfg.SecretID, again.SecretID)
	info, err := os.Stat(filepath.Join(dir, "secret-id"))
	must.NoError(t, err)
	must.Eq(t, os.FileMode(0o600), info.Mode().Perm())
}

func TestClient_BatchAllocCompletes(t *testing.T) {
	c, s := testClient(t)
	s.setAllocs(testAlloc("a1", structs.JobTypeBatch, mockTask("t", map[string]any{"run_for": "20ms"})))
	waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
	final := s.lastReport("a1")
	ts := final.TaskStates["t"]
	must.Eq(t, structs.TaskStateDead, ts.State)
	must.False(t, ts.Failed)
	must.False(t, ts.FinishedAt.IsZero())
	must.DirExists(t, filepath.Join(c.config.AllocDir, "a1", "t", "local"))
	must.DirExists(t, filepath.Join(c.config.AllocDir, "a1", "alloc", "logs"))
}

func TestClient_FailedTaskFailsAllocAndKillsSiblings(t *testing.T) {
	_, s := testClient(t)
	s.setAllocs(testAlloc("a1", structs.JobTypeService,
		mockTask("bad", map[string]any{"run_for": "10ms", "exit_code": 1}),
		mockTask("good", map[string]any{"run_for": "1h"})))
	waitFor(t, "failed", func() bool {
		r := s.lastReport("a1")
		return r != nil && r.ClientStatus == structs.AllocClientStatusFailed &&
			r.TaskStates["good"].State == structs.TaskStateDead
	})
	r := s.lastReport("a1")
	must.True(t, r.TaskStates["bad"].Failed)
	must.False(t, r.TaskStates["good"].Failed, must.Sprint("a sibling killed for another's failure did not fail"))
}

func TestClient_StopAndRemove(t *testing.T) {
	c, s := testClient(t)
	a1 := testAlloc("a1", structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
	a2 := testAlloc("a2", structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
	s.setAllocs(a1, a2)
	waitFor(t, "a1 running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	waitFor(t, "a2 running", reportedStatus(s, "a2", structs.AllocClientStatusRunning))

	// The servers stop a1: its task is killed and it completes.
	stopped := *a1
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped, a2)
	waitFor(t, "a1 complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
	events := s.lastReport("a1").TaskStates["t"].Events
	must.Eq(t, structs.TaskEventKilled, events[len(events)-1].Type)

	// a2 disappears (its job was purged): killed and its directory removed; all it still
	// reports is how its task ended (the servers keep that in the purge record).
	before := s.reportCount("a2")
	s.setAllocs(&stopped)
	waitFor(t, "a2's directory to go", func() bool {
		_, err := os.Stat(filepath.Join(c.config.AllocDir, "a2"))
		return os.IsNotExist(err)
	})
	s.mu.Lock()
	after := append([]*structs.Allocation(nil), s.reports["a2"][before:]...)
	s.mu.Unlock()
	for _, r := range after {
		must.NotEq(t, structs.AllocClientStatusRunning, r.ClientStatus, must.Sprint("a removed allocation reports only its end"))
	}

	// An allocation stopped before the client ever ran it is reported complete at once.
	never := testAlloc("a3", structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
	never.DesiredStatus = structs.AllocDesiredStatusStop
	s.setAllocs(&stopped, never)
	waitFor(t, "a3 complete", reportedStatus(s, "a3", structs.AllocClientStatusComplete))
	must.Eq(t, 0, c.TaskPID("a3", "t"))
}

func TestClient_ShutdownKillsWithoutReporting(t *testing.T) {
	dir := t.TempDir()
	servers := newFakeServers()
	c, err := New(&Config{AllocDir: dir, Drivers: []drivers.Driver{drivers.RawExec{}}, MaxQueryTime: time.Second}, servers)
	must.NoError(t, err)
	<-c.Registered()
	servers.setAllocs(testAlloc("a1", structs.JobTypeService, &api.Task{Name: "t", Driver: "raw_exec",
		Config: map[string]any{"command": "/bin/sleep", "args": []any{"600"}}}))
	waitFor(t, "running", reportedStatus(servers, "a1", structs.AllocClientStatusRunning))
	pid := c.TaskPID("a1", "t")
	must.Positive(t, pid)
	reports := servers.reportCount("a1")
	c.Shutdown()
	waitFor(t, "the process to go", func() bool { return processGone(pid) })
	must.Eq(t, reports, servers.reportCount("a1"), must.Sprint("a shutdown is not the task's end"))
}

func TestClientStatus(t *testing.T) {
	st := func(state string, failed bool) *structs.TaskState {
		return &structs.TaskState{State: state, Failed: failed}
	}
	cases := []struct {
		name   string
		states map[string]*structs.TaskState
		want   string
	}{
		{name: "all pending", states: map[string]*structs.TaskState{"a": st("pending", false)}, want: "pending"},
		{name: "one running", states: map[string]*structs.TaskState{"a": st("running", false), "b": st("pending", false)}, want: "running"},
		{name: "one done, one running", states: map[string]*structs.TaskState{"a": st("dead", false), "b": st("running", false)}, want: "running"},
		{name: "all done", states: map[string]*structs.TaskState{"a": st("dead", false), "b": st("dead", false)}, want: "complete"},
		{name: "one failed", states: map[string]*structs.TaskState{"a": st("dead", true), "b": st("running", false)}, want: "failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := clientStatus(tc.states)
			must.Eq(t, tc.want, got)
		})
	}
}

func TestRestartPolicy(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	p := newRestartPolicy(&api.RestartPolicy{Attempts: new(2), Interval: new(time.Minute), Delay: new(time.Second), Mode: new("fail")}, false)
	for i, want := range []bool{true, true, false} {
		delay, ok := p.next(start.Add(time.Duration(i) * time.Second))
		must.Eq(t, want, ok, must.Sprintf("attempt %d", i))
		if ok {
			must.Eq(t, time.Second, delay)
		}
	}
	// Past the interval the attempts are available again.
	_, ok := p.next(start.Add(2 * time.Minute))
	must.True(t, ok)

	delayMode := newRestartPolicy(&api.RestartPolicy{Attempts: new(1), Interval: new(time.Minute), Delay: new(time.Second), Mode: new("delay")}, false)
	_, ok = delayMode.next(start)
	must.True(t, ok)
	delay, ok := delayMode.next(start.Add(10 * time.Second))
	must.True(t, ok)
	must.Eq(t, 50*time.Second, delay, must.Sprint("waits out the rest of the interval"))

	defaults := newRestartPolicy(nil, true)
	must.Eq(t, 3, defaults.attempts)
	must.Eq(t, fmt.Sprint(24*time.Hour), fmt.Sprint(defaults.interval))
}

func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
