package client

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	bolt "go.etcd.io/bbolt"
)

// restartable is a client whose state and allocation directories outlive it, so that a
// second client started on them is the same agent restarted.
type restartable struct {
	t        *testing.T
	stateDir string
	allocDir string
	logs     *syncBuffer
}

func newRestartable(t *testing.T) *restartable {
	return &restartable{t: t, stateDir: t.TempDir(), allocDir: t.TempDir(), logs: &syncBuffer{}}
}

// start runs a client on the directories against servers that have allocs.
func (r *restartable) start(allocs ...*structs.Allocation) (*Client, *fakeServers) {
	r.t.Helper()
	return r.startWith(nil, allocs...)
}

// startWith is start with more drivers than mock_driver and raw_exec.
func (r *restartable) startWith(extra []drivers.Driver, allocs ...*structs.Allocation) (*Client, *fakeServers) {
	r.t.Helper()
	servers := newFakeServers()
	servers.setAllocs(allocs...)
	c, err := New(&Config{
		Name: "test", AllocDir: r.allocDir, StateDir: r.stateDir,
		Drivers:      append([]drivers.Driver{drivers.Mock{}, drivers.RawExec{}}, extra...),
		MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
		Logger: hclog.New(&hclog.LoggerOptions{Output: r.logs, Level: hclog.Info}),
	}, servers)
	must.NoError(r.t, err)
	r.t.Cleanup(c.Shutdown)
	return c, servers
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// countingTask appends a line to <task dir>/starts each time it starts, then runs for secs.
func countingTask(secs string) *api.Task {
	return &api.Task{Name: "t", Driver: "raw_exec", Config: map[string]any{
		"command": "/bin/sh", "args": []any{"-c", `echo started >> "$NOMAD_TASK_DIR/starts"; exec sleep ` + secs},
	}}
}

func (r *restartable) starts(allocID string) int {
	raw, err := os.ReadFile(filepath.Join(r.allocDir, allocID, "t", "local", "starts"))
	if os.IsNotExist(err) {
		return 0
	}
	must.NoError(r.t, err)
	return strings.Count(string(raw), "started")
}

// killGroup ends a task's process group; the test registers it so that no task outlives it.
func killGroup(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
}

func lastEvent(a *structs.Allocation, task string) *structs.TaskEvent {
	ev := a.TaskStates[task].Events
	return ev[len(ev)-1]
}

// TestClient_ReattachesAfterRestart: the agent goes away without stopping its task (as a
// kill -9 does); the next client on the same state directory finds the same process,
// reports it running, never starts it again, and can stop it.
func TestClient_ReattachesAfterRestart(t *testing.T) {
	r := newRestartable(t)
	alloc := testAlloc("a1", structs.JobTypeService, countingTask("600"))
	c1, s1 := r.start(alloc)
	waitFor(t, "running", reportedStatus(s1, "a1", structs.AllocClientStatusRunning))
	waitFor(t, "the task", func() bool { return r.starts("a1") == 1 })
	pid := c1.TaskPID("a1", "t")
	must.Positive(t, pid)
	killGroup(t, pid)
	c1.Shutdown()
	must.False(t, processGone(pid), must.Sprint("the task outlives the agent"))

	c2, s2 := r.start(alloc)
	waitFor(t, "re-attached", func() bool { return c2.TaskPID("a1", "t") == pid })
	waitFor(t, "reported running", reportedStatus(s2, "a1", structs.AllocClientStatusRunning))
	must.Eq(t, 1, r.starts("a1"), must.Sprint("the task was started once"))
	must.StrContains(t, r.logs.String(), "re-attached to task")

	// The servers stop it: the re-attached process is killed and the allocation completes.
	stopped := *alloc
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s2.setAllocs(&stopped)
	waitFor(t, "complete", reportedStatus(s2, "a1", structs.AllocClientStatusComplete))
	waitFor(t, "the process to go", func() bool { return processGone(pid) })
	must.Eq(t, structs.TaskEventKilled, lastEvent(s2.lastReport("a1"), "t").Type)
	must.Eq(t, 1, r.starts("a1"))
}

// TestClient_RestartNeverStartsTwice: a client restarted twice in a row on a task that runs,
// and on one that completed, starts neither again.
func TestClient_RestartNeverStartsTwice(t *testing.T) {
	r := newRestartable(t)
	running := testAlloc("a1", structs.JobTypeService, countingTask("600"))
	done := testAlloc("a2", structs.JobTypeBatch, countingTask("0"))
	c, s := r.start(running, done)
	waitFor(t, "a1 running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	waitFor(t, "a2 complete", reportedStatus(s, "a2", structs.AllocClientStatusComplete))
	waitFor(t, "a1's task", func() bool { return r.starts("a1") == 1 })
	pid := c.TaskPID("a1", "t")
	killGroup(t, pid)
	for i := range 2 {
		c.Shutdown()
		c, s = r.start(running, done)
		waitFor(t, "a1 re-attached", func() bool { return c.TaskPID("a1", "t") == pid })
		waitFor(t, "a2 reported complete", reportedStatus(s, "a2", structs.AllocClientStatusComplete))
		waitFor(t, "a1 reported running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
		must.Eq(t, 1, r.starts("a1"), must.Sprintf("restart %d", i))
		must.Eq(t, 1, r.starts("a2"), must.Sprintf("restart %d", i))
	}
}

// TestClient_TaskExitedWhileDown: a raw_exec task that ended while no agent ran is reported
// gatedTask counts its starts, then waits for the file gate and exits with code.
func gatedTask(gate string, code int) *api.Task {
	return &api.Task{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/sh", "args": []any{"-c",
		`echo started >> "$NOMAD_TASK_DIR/starts"; while [ ! -e "` + gate + `" ]; do sleep 0.05; done; exit ` + strconv.Itoa(code)}}}
}

// TestClient_TaskExitedWhileDown: a raw_exec task that ended while no agent ran is reported
// with the exit code its shim recorded; one killed with its shim left no record and is
// reported dead and failed with an event saying its exit code was lost. Neither is started
// again.
func TestClient_TaskExitedWhileDown(t *testing.T) {
	cases := []struct {
		name string
		// end ends the task while no agent runs.
		end       func(t *testing.T, pid int, gate string)
		wantEvent string
		wantCode  int
		wantMsg   string
	}{
		{
			name: "exit recorded",
			end: func(t *testing.T, pid int, gate string) {
				must.NoError(t, os.WriteFile(gate, nil, 0o644))
			},
			wantEvent: structs.TaskEventNotRestarting, wantCode: 3,
		},
		{
			name: "killed with its shim",
			end: func(t *testing.T, pid int, _ string) {
				must.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
			},
			wantEvent: structs.TaskEventTerminated, wantMsg: "exit code was lost",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRestartable(t)
			gate := filepath.Join(t.TempDir(), "go")
			alloc := testAlloc("a1", structs.JobTypeService, gatedTask(gate, 3))
			c1, s1 := r.start(alloc)
			waitFor(t, "running", reportedStatus(s1, "a1", structs.AllocClientStatusRunning))
			waitFor(t, "the task", func() bool { return r.starts("a1") == 1 })
			pid := c1.TaskPID("a1", "t")
			killGroup(t, pid)
			c1.Shutdown()
			tc.end(t, pid, gate)
			waitFor(t, "the process to go", func() bool { return processGone(pid) })

			_, s2 := r.start(alloc)
			waitFor(t, "failed", reportedStatus(s2, "a1", structs.AllocClientStatusFailed))
			got := s2.lastReport("a1")
			ts := got.TaskStates["t"]
			must.Eq(t, structs.TaskStateDead, ts.State)
			must.True(t, ts.Failed)
			must.Eq(t, tc.wantEvent, lastEvent(got, "t").Type)
			must.StrContains(t, lastEvent(got, "t").Message, tc.wantMsg)
			if tc.wantCode != 0 {
				var terminated *structs.TaskEvent
				for _, e := range ts.Events {
					if e.Type == structs.TaskEventTerminated {
						terminated = e
					}
				}
				must.NotNil(t, terminated)
				must.Eq(t, tc.wantCode, terminated.ExitCode)
			}
			must.Eq(t, 1, r.starts("a1"))
		})
	}
}

// TestClient_CorruptStateFile: an unreadable state file is logged once, by name, moved aside,
// and the client starts with no allocations.
func TestClient_CorruptStateFile(t *testing.T) {
	// undecodable is a sound bbolt file whose allocation record is not an allocation.
	undecodable := func(t *testing.T, path string) {
		db, err := bolt.Open(path, 0o600, nil)
		must.NoError(t, err)
		must.NoError(t, db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketAllocs)
			if err != nil {
				return err
			}
			ab, err := b.CreateBucket([]byte("a1"))
			if err != nil {
				return err
			}
			return ab.Put(keyAlloc, []byte("{not json"))
		}))
		must.NoError(t, db.Close())
	}
	cases := []struct {
		name  string
		write func(t *testing.T, path string)
	}{
		{name: "garbage", write: func(t *testing.T, path string) {
			must.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("not a bolt file "), 1024), 0o600))
		}},
		{name: "truncated page", write: func(t *testing.T, path string) {
			must.NoError(t, os.WriteFile(path, make([]byte, 100), 0o600))
		}},
		{name: "undecodable allocation", write: undecodable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRestartable(t)
			path := filepath.Join(r.stateDir, stateFileName)
			tc.write(t, path)
			c, _ := r.start()
			<-c.Registered()
			logs := r.logs.String()
			must.Eq(t, 1, strings.Count(logs, "[ERROR]"), must.Sprint(logs))
			must.StrContains(t, logs, path)
			must.FileExists(t, path+".corrupt")
			must.MapEmpty(t, c.runners)
			// The fresh file works: the client stores allocations again.
			must.NoError(t, c.state.putAlloc(testAlloc("a1", structs.JobTypeService)))
		})
	}
}

// TestClientState_RoundTrip: what is stored is what a restarted client reads, and a
// forgotten allocation is not brought back by a late task write.
func TestClientState_RoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, allocs, err := openClientState(dir, hclog.NewNullLogger())
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
	a := testAlloc("a1", structs.JobTypeService, countingTask("1"))
	must.NoError(t, s.putAlloc(a))
	ts := &structs.TaskState{State: structs.TaskStateRunning, Restarts: 2, StartedAt: time.Unix(100, 0).UTC(),
		Events: []*structs.TaskEvent{{Type: structs.TaskEventStarted, Time: 5}}}
	must.NoError(t, s.putTaskState("a1", "t", ts))
	must.NoError(t, s.putHandle("a1", "t", &drivers.HandleState{Driver: "raw_exec", PID: 42, StartTime: 7}))
	must.NoError(t, s.putTaskState("gone", "t", ts))
	must.NoError(t, s.close())

	s, allocs, err = openClientState(dir, hclog.NewNullLogger())
	must.NoError(t, err)
	must.Len(t, 1, allocs)
	must.Eq(t, "a1", allocs[0].alloc.ID)
	must.Eq(t, "t", allocs[0].alloc.Job.TaskGroups[0].Tasks[0].Name)
	must.Eq(t, ts, allocs[0].states["t"])
	must.Eq(t, &drivers.HandleState{Driver: "raw_exec", PID: 42, StartTime: 7}, allocs[0].handles["t"])

	must.NoError(t, s.putHandle("a1", "t", nil))
	must.NoError(t, s.deleteAlloc("a1"))
	must.NoError(t, s.putTaskState("a1", "t", ts))
	must.NoError(t, s.close())
	s, allocs, err = openClientState(dir, hclog.NewNullLogger())
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
	must.NoError(t, s.close())
}

// TestClient_RestoreFollowsServers: what the servers decided while the agent was down is
// applied to the re-attached task: a stopped allocation's task is killed and the allocation
// completes; a removed (purged) one's task is killed and its directory removed.
func TestClient_RestoreFollowsServers(t *testing.T) {
	stop := func(a *structs.Allocation) *structs.Allocation {
		stopped := *a
		stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
		return &stopped
	}
	cases := []struct {
		name    string
		servers func(a *structs.Allocation) []*structs.Allocation
		// stored, when set, replaces the allocation in the state file before the restart:
		// what the previous run had received.
		stored func(a *structs.Allocation) *structs.Allocation
		check  func(t *testing.T, r *restartable, s *fakeServers)
	}{
		{
			name:    "stop received but not carried out",
			servers: func(a *structs.Allocation) []*structs.Allocation { return []*structs.Allocation{stop(a)} },
			stored:  stop,
			check: func(t *testing.T, r *restartable, s *fakeServers) {
				waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
				must.Eq(t, 1, r.starts("a1"))
			},
		},
		{
			name: "stopped",
			servers: func(a *structs.Allocation) []*structs.Allocation {
				stopped := *a
				stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
				return []*structs.Allocation{&stopped}
			},
			check: func(t *testing.T, r *restartable, s *fakeServers) {
				waitFor(t, "complete", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
				must.Eq(t, structs.TaskEventKilled, lastEvent(s.lastReport("a1"), "t").Type)
				must.Eq(t, 1, r.starts("a1"))
			},
		},
		{
			name:    "purged",
			servers: func(*structs.Allocation) []*structs.Allocation { return nil },
			check: func(t *testing.T, r *restartable, _ *fakeServers) {
				waitFor(t, "the allocation directory to go", func() bool {
					_, err := os.Stat(filepath.Join(r.allocDir, "a1"))
					return os.IsNotExist(err)
				})
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRestartable(t)
			alloc := testAlloc("a1", structs.JobTypeService, countingTask("600"))
			c1, s1 := r.start(alloc)
			waitFor(t, "running", reportedStatus(s1, "a1", structs.AllocClientStatusRunning))
			waitFor(t, "the task", func() bool { return r.starts("a1") == 1 })
			pid := c1.TaskPID("a1", "t")
			killGroup(t, pid)
			c1.Shutdown()
			if tc.stored != nil {
				st, _, err := openClientState(r.stateDir, hclog.NewNullLogger())
				must.NoError(t, err)
				must.NoError(t, st.putAlloc(tc.stored(alloc)))
				must.NoError(t, st.close())
			}

			c2, s2 := r.start(tc.servers(alloc)...)
			waitFor(t, "the process to go", func() bool { return processGone(pid) })
			tc.check(t, r, s2)
			// A removed allocation is forgotten by the state file; a stopped one is kept
			// until the servers have its final status.
			stored, err := c2.state.load()
			must.NoError(t, err)
			must.Eq(t, tc.name != "purged", len(stored) == 1)
		})
	}
}

// TestClient_ReattachedBatch: a re-attached batch task that ends by itself is known by the
// exit its shim recorded (exit 0 completes it); one killed with its shim has an unknown exit
// code and is reported failed, never started again, whatever its restart policy allows.
func TestClient_ReattachedBatch(t *testing.T) {
	cases := []struct {
		name       string
		end        func(t *testing.T, pid int, gate string)
		wantStatus string
		wantEvent  string
	}{
		{
			name:       "exits 0",
			end:        func(t *testing.T, _ int, gate string) { must.NoError(t, os.WriteFile(gate, nil, 0o644)) },
			wantStatus: structs.AllocClientStatusComplete, wantEvent: structs.TaskEventTerminated,
		},
		{
			name:       "killed with its shim",
			end:        func(t *testing.T, pid int, _ string) { must.NoError(t, syscall.Kill(-pid, syscall.SIGKILL)) },
			wantStatus: structs.AllocClientStatusFailed, wantEvent: structs.TaskEventNotRestarting,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRestartable(t)
			gate := filepath.Join(t.TempDir(), "go")
			alloc := testAlloc("a1", structs.JobTypeBatch, gatedTask(gate, 0))
			alloc.Job.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: new(3), Delay: new(time.Duration(0)),
				Interval: new(time.Hour), Mode: new("fail")}
			c1, s1 := r.start(alloc)
			waitFor(t, "running", reportedStatus(s1, "a1", structs.AllocClientStatusRunning))
			waitFor(t, "the task", func() bool { return r.starts("a1") == 1 })
			pid := c1.TaskPID("a1", "t")
			killGroup(t, pid)
			c1.Shutdown()

			c2, s2 := r.start(alloc)
			waitFor(t, "re-attached", func() bool { return c2.TaskPID("a1", "t") == pid })
			tc.end(t, pid, gate)
			waitFor(t, tc.wantStatus, reportedStatus(s2, "a1", tc.wantStatus))
			must.Eq(t, tc.wantEvent, lastEvent(s2.lastReport("a1"), "t").Type)
			must.Eq(t, 1, r.starts("a1"))
		})
	}
}

// plainDriver hides whether the driver it wraps can re-attach: it offers Start only.
type plainDriver struct{ d drivers.Driver }

func (p plainDriver) Name() string                     { return "plain" }
func (p plainDriver) Fingerprint() *structs.DriverInfo { return p.d.Fingerprint() }
func (p plainDriver) Start(cfg *drivers.TaskConfig) (drivers.TaskHandle, error) {
	return p.d.Start(cfg)
}

// TestClient_NonReattachableKilledAtShutdown: a task whose driver cannot find it again is
// killed when the agent stops, rather than left running with no one to stop it; the next run
// reports it lost.
func TestClient_NonReattachableKilledAtShutdown(t *testing.T) {
	r := newRestartable(t)
	task := countingTask("600")
	task.Driver = "plain"
	alloc := testAlloc("a1", structs.JobTypeService, task)
	extra := []drivers.Driver{plainDriver{drivers.RawExec{}}}
	c1, s1 := r.startWith(extra, alloc)
	waitFor(t, "running", reportedStatus(s1, "a1", structs.AllocClientStatusRunning))
	waitFor(t, "the task", func() bool { return r.starts("a1") == 1 })
	pid := c1.TaskPID("a1", "t")
	killGroup(t, pid)
	c1.Shutdown()
	must.True(t, processGone(pid), must.Sprint("killed before Shutdown returned"))

	_, s2 := r.startWith(extra, alloc)
	waitFor(t, "failed", reportedStatus(s2, "a1", structs.AllocClientStatusFailed))
	must.StrContains(t, lastEvent(s2.lastReport("a1"), "t").Message, "no handle was stored")
	must.Eq(t, 1, r.starts("a1"))
}
