package client

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/servicecheck"
	"github.com/nomadfork/nomad/structs"
)

// allocRunner runs the tasks of one allocation and reports their states.
type allocRunner struct {
	c      *Client
	id     string
	logger hclog.Logger
	// dir is the allocation's directory; "" when the allocation's ID cannot name one (then
	// the allocation fails and nothing is created or removed).
	dir    string
	dirErr error

	mu    sync.Mutex
	alloc *structs.Allocation // the servers' latest view
	tasks []*taskRunner
	// states are replaced, never changed in place: a report may still hold the old ones.
	states map[string]*structs.TaskState
	// stopping: the servers asked for a stop; destroyed: the allocation is gone (purged), and
	// only how its tasks ended is still reported (for the purge record); silent: the agent
	// is shutting down and reports nothing more.
	stopping  bool
	destroyed bool
	silent    bool
	// detached: the agent is shutting down and leaves the tasks running (they are
	// re-attached by its next run); nothing more is reported or stored.
	detached bool
	// lastReported avoids sending the same status and states twice.
	lastReported string
	// restored is what the state file held when this runner re-attaches to an allocation a
	// previous run of the agent started; nil for one received from the servers.
	restored *restoredAlloc
	// health is the verdict on the allocation's health in its deployment (alloc_health.go);
	// healthStop ends its watcher, healthWG waits for it, healthNotify wakes it.
	health       allocHealth
	healthStop   chan struct{}
	healthWG     sync.WaitGroup
	healthNotify chan struct{}
	// checks runs the checks of the allocation's nomad services (service_checks.go).
	checks *servicecheck.Runner
	// netStatus is the allocation's network in bridge mode (nil in host mode), netNS the
	// path of its namespace, which its tasks join ("" once torn down).
	netStatus *api.AllocNetworkStatus
	netNS     string
	// sandbox names the driver holding the namespace in a sandbox (docker's pause
	// container), "" when the client made the namespace itself.
	sandbox string
	// stateCh wakes the lifecycle order (runTasks) after a task state or the runner's mode
	// changed.
	stateCh chan struct{}

	done chan struct{}
}

func newAllocRunner(c *Client, alloc *structs.Allocation) *allocRunner {
	dir, err := allocdir.Join(c.config.AllocDir, alloc.ID)
	r := &allocRunner{
		c:      c,
		id:     alloc.ID,
		logger: c.logger.With("alloc_id", alloc.ID),
		dir:    dir,
		dirErr: err,
		alloc:  alloc,
		states: map[string]*structs.TaskState{},
		done:   make(chan struct{}),

		healthNotify: make(chan struct{}, 1),
		stateCh:      make(chan struct{}, 1),
	}
	r.checks = r.newCheckRunner()
	return r
}

// taskRunners are the allocation's task runners as they are now.
func (r *allocRunner) taskRunners() []*taskRunner {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tasks
}

func (r *allocRunner) isDone() bool {
	return isClosed(r.done)
}

// run sets up the allocation directory, runs every task until it ends and reports the end.
func (r *allocRunner) run() {
	defer close(r.done)
	defer r.checks.Stop()
	// The servers' view may change under run (update); it starts from the one it has now.
	r.mu.Lock()
	alloc := r.alloc
	r.mu.Unlock()
	if alloc.Job == nil || alloc.Job.LookupTaskGroup(alloc.TaskGroup) == nil {
		r.fail(fmt.Sprintf("task group %q not found in the allocation's job", alloc.TaskGroup))
		return
	}
	if r.dirErr != nil {
		r.fail(fmt.Sprintf("invalid allocation ID %q: %v", alloc.ID, r.dirErr))
		return
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if r.restored == nil {
		// Stored before any task starts, so that a restarted agent knows the allocation of
		// every task it may find running.
		if err := r.c.state.putAlloc(alloc); err != nil {
			r.logger.Error("storing the allocation in the client state failed", "error", err)
		}
	}
	// Every task name is checked before anything is created, so that an allocation with
	// one bad name leaves no directory behind.
	for _, task := range tg.Tasks {
		if err := allocdir.CheckElem(task.Name); err != nil {
			r.fail(fmt.Sprintf("invalid task name %q: %v", task.Name, err))
			return
		}
	}
	if r.restored == nil {
		r.takeOverDisk(tg, alloc.PreviousAllocation)
	}
	for _, d := range []string{filepath.Join(r.dir, "alloc", "logs"), filepath.Join(r.dir, "alloc", "data"), filepath.Join(r.dir, "alloc", "tmp")} {
		if err := allocdir.MkdirAll(r.c.config.AllocDir, d, 0o755); err != nil {
			r.fail(fmt.Sprintf("creating the allocation directory: %v", err))
			return
		}
	}
	// Before any task: they all start in the allocation's network.
	if err := r.setupNetwork(alloc, tg); err != nil {
		r.fail(err.Error())
		return
	}
	r.mu.Lock()
	for _, task := range tg.Tasks {
		tr := newTaskRunner(r, alloc, tg, task)
		r.tasks = append(r.tasks, tr)
		r.states[task.Name] = &structs.TaskState{State: structs.TaskStatePending}
		if r.restored != nil {
			if ts := r.restored.states[task.Name]; ts != nil {
				r.states[task.Name] = ts
				tr.restoredState = ts
			}
			tr.restoredHandle = r.restored.handles[task.Name]
		}
	}
	tasks := r.tasks
	// A stop, removal or shutdown that came before the tasks existed found nothing to kill.
	stopping := r.stopping || r.destroyed || r.silent
	if r.detached {
		for _, tr := range tasks {
			tr.detach()
		}
	}
	r.mu.Unlock()
	r.report()
	if stopping {
		r.killAll("alloc was stopped before its tasks started")
	}
	r.trackHealth()
	r.runTasks(tasks)
	r.checks.Stop()
	r.stopHealth()
	r.report()
	r.mu.Lock()
	destroyed, silent, detached := r.destroyed, r.silent, r.detached
	r.mu.Unlock()
	// No task runs any more, unless the agent left them running for its next run (which
	// finds the namespace again).
	if !detached {
		r.teardownNetwork()
	}
	switch {
	case destroyed:
		r.c.services.forget(r.id)
	case !silent:
		r.c.services.set(r.id, nil)
	}
	if destroyed && r.dirErr == nil {
		if err := os.RemoveAll(r.dir); err != nil {
			r.logger.Warn("removing the allocation directory failed", "error", err)
		}
	}
}

// fail reports the allocation failed before any task ran.
func (r *allocRunner) fail(msg string) {
	r.logger.Error("allocation failed", "error", msg)
	r.c.updater.send(&structs.Allocation{ID: r.id, ClientStatus: structs.AllocClientStatusFailed, ClientDescription: msg})
}

// update takes the servers' newer view; a stop they ask for kills the tasks.
func (r *allocRunner) update(alloc *structs.Allocation) {
	if alloc.ClientStatus == structs.AllocClientStatusUnknown {
		// The servers marked it unknown while this node was disconnected: report how it is
		// again, even unchanged, so that they see it reconnect.
		r.mu.Lock()
		r.lastReported = ""
		r.mu.Unlock()
		r.report()
	}
	r.mu.Lock()
	if alloc.AllocModifyIndex == r.alloc.AllocModifyIndex {
		r.mu.Unlock()
		return
	}
	r.alloc = alloc
	if !r.destroyed && !r.detached {
		if err := r.c.state.putAlloc(alloc); err != nil {
			r.logger.Error("storing the allocation in the client state failed", "error", err)
		}
	}
	stop := alloc.DesiredStatus != structs.AllocDesiredStatusRun && !r.stopping
	if stop {
		r.stopping = true
	}
	r.mu.Unlock()
	if stop {
		r.logger.Info("stopping allocation", "reason", alloc.DesiredDescription)
		r.c.services.set(r.id, nil)
		r.checks.Set(nil)
		r.killAll("alloc stopped by the servers")
		return
	}
	r.trackHealth()
}

// destroy kills the tasks of an allocation that no longer exists and removes its directory.
func (r *allocRunner) destroy() {
	r.mu.Lock()
	r.destroyed = true
	r.mu.Unlock()
	r.logger.Info("allocation removed by the servers: killing its tasks")
	r.killEverything("alloc removed by the servers")
}

// silence kills the tasks without reporting anything more (agent shutdown).
func (r *allocRunner) silence() {
	r.mu.Lock()
	r.silent = true
	r.mu.Unlock()
	r.killEverything("agent shutting down")
}

// detach stops the runner without touching its tasks (agent shutdown with a state directory):
// they keep running for the next run of the agent.
func (r *allocRunner) detach() {
	r.mu.Lock()
	r.silent, r.detached = true, true
	tasks := r.tasks
	r.mu.Unlock()
	for _, tr := range tasks {
		tr.detach()
	}
	r.notifyState()
}

// shutdownDelay is how long a task waits, between its services' deregistration and its
// kill signal, when the servers stop the allocation: its group's shutdown_delay plus its own.
// None when the stop asked for none (alloc stop -no-shutdown-delay), or the allocation is
// removed or the agent shuts down, or the task stops for another reason (a failed sibling, a
// dead leader, the end of the main tasks).
func (r *allocRunner) shutdownDelay(task *api.Task, tg *api.TaskGroup) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopping || r.destroyed || r.silent {
		return 0
	}
	if nd := r.alloc.DesiredTransition.NoShutdownDelay; nd != nil && *nd {
		return 0
	}
	var d time.Duration
	if tg != nil && tg.ShutdownDelay != nil {
		d += *tg.ShutdownDelay
	}
	return d + task.ShutdownDelay
}

// killAll kills every task but the poststop ones, which run once the others have ended
// (runTasks), also after a stop or a failure.
func (r *allocRunner) killAll(reason string) {
	tasks := r.taskRunners()
	for _, tr := range tasks {
		if tr.kind != kindPoststop {
			tr.kill(reason)
		}
	}
	r.notifyState()
}

// killEverything kills every task, poststop ones included: the allocation is removed or the
// agent is shutting down, and nothing runs after.
func (r *allocRunner) killEverything(reason string) {
	tasks := r.taskRunners()
	for _, tr := range tasks {
		tr.kill(reason)
	}
	r.notifyState()
}

func (r *allocRunner) taskPID(task string) int {
	tasks := r.taskRunners()
	for _, tr := range tasks {
		if tr.task.Name == task {
			return tr.pid()
		}
	}
	return 0
}

// setTaskState changes one task's state through fn (on a copy) and reports the allocation.
// A task that failed takes its siblings down with it.
func (r *allocRunner) setTaskState(task string, fn func(ts *structs.TaskState)) {
	r.mu.Lock()
	ts := r.states[task].Copy()
	if ts == nil {
		ts = &structs.TaskState{State: structs.TaskStatePending}
	}
	fn(ts)
	if len(ts.Events) > maxTaskEvents {
		ts.Events = ts.Events[len(ts.Events)-maxTaskEvents:]
	}
	states := make(map[string]*structs.TaskState, len(r.states))
	for k, v := range r.states {
		states[k] = v
	}
	states[task] = ts
	r.states = states
	failed := ts.State == structs.TaskStateDead && ts.Failed
	// Stored under the lock, so that the file has a task's states in the order they came.
	if !r.destroyed && !r.detached {
		if err := r.c.state.putTaskState(r.id, task, ts); err != nil {
			r.logger.Error("storing a task state failed", "task", task, "error", err)
		}
	}
	// A shutting-down agent leaves the registrations as they are: the tasks either keep
	// running for its next run, or the servers drop them with the node.
	// A stopping allocation's services stay deregistered: they go first, so that traffic
	// drains during the shutdown delays before any task is signalled.
	if !r.destroyed && !r.silent {
		if r.stopping {
			r.c.services.set(r.id, nil)
		} else {
			r.c.services.set(r.id, allocServices(r.c.node, r.alloc, states))
		}
	}
	// Checks run while their service is registered, and not once the allocation stops or
	// the agent shuts down: a check of a task being killed would only fail.
	if r.stopping || r.destroyed || r.silent {
		r.checks.Set(nil)
	} else {
		r.checks.Set(allocChecks(r.c.node, r.alloc, states))
	}
	r.mu.Unlock()
	r.notifyState()
	if failed {
		r.killAll("sibling task " + task + " failed")
	}
	r.healthChanged()
	r.report()
}

// maxTaskEvents is how many of a task's events are kept, newest last.
const maxTaskEvents = 10

// clientStatus derives the allocation's status from its tasks: any failed task fails it,
// then any running task makes it running, any pending one pending; all done is complete.
func clientStatus(states map[string]*structs.TaskState) (string, string) {
	var failed, running, pending bool
	for _, ts := range states {
		switch {
		case ts.State == structs.TaskStateRunning:
			running = true
		case ts.State == structs.TaskStatePending:
			pending = true
		case ts.Failed:
			failed = true
		}
	}
	switch {
	case failed:
		return structs.AllocClientStatusFailed, "Failed tasks"
	case running:
		return structs.AllocClientStatusRunning, "Tasks are running"
	case pending:
		return structs.AllocClientStatusPending, "No tasks have started"
	}
	return structs.AllocClientStatusComplete, "All tasks have completed"
}

// report sends the allocation's status and task states, unless nothing changed since the last
// report or the agent is shutting down. An allocation whose job was purged still reports how
// it ended: the servers keep that in the purge record.
func (r *allocRunner) report() {
	r.mu.Lock()
	defer r.mu.Unlock()
	// A removed (purged) allocation still reports how its tasks ended: the servers keep that
	// in the purge record.
	if r.silent || len(r.states) == 0 {
		return
	}
	status, desc := clientStatus(r.states)
	key := status + "|" + stateKey(r.states)
	update := &structs.Allocation{ID: r.id, ClientStatus: status, ClientDescription: desc, TaskStates: r.states}
	// The verdict rides on every report once made, so a later report that replaces this one
	// in the updater's batch still carries it.
	if h := r.health; h.healthy != nil {
		update.DeploymentID = h.deploymentID
		update.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: new(*h.healthy), Timestamp: h.at}
		key += fmt.Sprintf("|%s:%t", h.deploymentID, *h.healthy)
	}
	if key == r.lastReported {
		return
	}
	r.lastReported = key
	// In host mode, the empty status upstream reports rather than none.
	update.NetworkStatus = &api.AllocNetworkStatus{}
	if r.netStatus != nil {
		update.NetworkStatus = r.netStatus
	}
	r.c.updater.send(update)
}

// stateKey summarises task states for change detection: state, failure, restarts and the
// number of events of each task.
func stateKey(states map[string]*structs.TaskState) string {
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	sort.Strings(names)
	key := ""
	for _, n := range names {
		ts := states[n]
		key += fmt.Sprintf("%s:%s:%t:%d:%d;", n, ts.State, ts.Failed, ts.Restarts, len(ts.Events))
		if len(ts.Events) > 0 {
			key += fmt.Sprint(ts.Events[len(ts.Events)-1].Time)
		}
	}
	return key
}
