package client

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocdir"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/taskenv"
	"github.com/nomadfork/nomad/client/template"
	"github.com/nomadfork/nomad/structs"
)

// taskRunner runs one task: it starts it with its driver, restarts it as its restart policy
// allows, and kills it when asked.
type taskRunner struct {
	ar    *allocRunner
	alloc *structs.Allocation
	tg    *api.TaskGroup
	task  *api.Task
	batch bool
	// kind is the task's place in the allocation's lifecycle order (alloc_lifecycle.go).
	kind lifecycleKind
	// received: its Received event was given before its turn (announceWaits), not by run.
	received bool
	policy   restartPolicy

	killOnce   sync.Once
	killCh     chan struct{}
	killReason string
	// killFails marks a kill that fails the task (a template that can no longer render);
	// set before kill closes killCh.
	killFails bool
	// restartCh asks for an in-place restart of the running task (alloc restart, or a
	// check_restart, which counts as a failure).
	restartCh chan restartRequest
	// detachCh closes when the agent shuts down leaving the task running.
	detachOnce sync.Once
	detachCh   chan struct{}

	// restoredState and restoredHandle are what the state file held for the task when
	// the allocation is restored after an agent restart.
	restoredState  *structs.TaskState
	restoredHandle *drivers.HandleState
	// mountErr is why a restored task's volume_mounts no longer resolve on this node: it
	// runs on with the mounts it has, and is not started again without them.
	mountErr error

	mu     sync.Mutex
	handle drivers.TaskHandle
	// cfg is what the task was started with, kept for commands run in its context (exec).
	cfg *drivers.TaskConfig

	// templates keeps the task's templates rendered while run runs, which stops it.
	templates *template.Manager
	// baseEnv is the task's environment without what env templates give.
	baseEnv map[string]string
}

func newTaskRunner(ar *allocRunner, alloc *structs.Allocation, tg *api.TaskGroup, task *api.Task) *taskRunner {
	kind := taskKind(task)
	// A prestart, poststart or poststop task that is no sidecar runs to completion, once, as
	// a batch task does, whatever the job's type; it is restarted only when it fails.
	batch := alloc.Job.Type == structs.JobTypeBatch || alloc.Job.Type == structs.JobTypeSysBatch || kind.runsToCompletion()
	rp := tg.RestartPolicy
	if task.RestartPolicy != nil {
		rp = task.RestartPolicy
	}
	return &taskRunner{
		ar: ar, alloc: alloc, tg: tg, task: task, batch: batch, kind: kind,
		policy:    newRestartPolicy(rp, batch),
		killCh:    make(chan struct{}),
		detachCh:  make(chan struct{}),
		restartCh: make(chan restartRequest, 1),
	}
}

// runningHandle is the running task's handle, nil when it is not running.
func (tr *taskRunner) runningHandle() drivers.TaskHandle {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.handle
}

// signal sends sig to the running task, after recording it as an event.
func (tr *taskRunner) signal(sig syscall.Signal, name string) error {
	h := tr.runningHandle()
	if h == nil {
		return structs.BadRequest("task %q is not running", tr.task.Name)
	}
	tr.event(&structs.TaskEvent{Type: structs.TaskEventSignaling, TaskSignal: name,
		TaskSignalReason: "User requested signal", Message: "Task being sent signal " + name}, nil)
	if err := h.Signal(sig); err != nil {
		return structs.BadRequest("signalling task %q: %v", tr.task.Name, err)
	}
	return nil
}

// restartRequest is one restart of the running task. A failure restart (check_restart)
// goes through the restart policy, as a task that exited would; another is started again at
// once and not counted.
type restartRequest struct {
	reason  string
	failure bool
}

// restart asks the run loop to restart the running task in place.
func (tr *taskRunner) restart() error {
	return tr.requestRestart(restartRequest{reason: "User requested restart"})
}

func (tr *taskRunner) requestRestart(req restartRequest) error {
	if tr.runningHandle() == nil {
		return structs.BadRequest("task %q is not running", tr.task.Name)
	}
	select {
	case tr.restartCh <- req:
	default: // one is pending already
	}
	return nil
}

func (tr *taskRunner) kill(reason string) {
	tr.killOnce.Do(func() {
		tr.killReason = reason
		close(tr.killCh)
	})
}

func (tr *taskRunner) killed() bool {
	return isClosed(tr.killCh)
}

func (tr *taskRunner) pid() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.handle == nil {
		return 0
	}
	return tr.handle.PID()
}

// event appends an event to the task's state after fn changed the state.
func (tr *taskRunner) event(e *structs.TaskEvent, fn func(ts *structs.TaskState)) {
	e.Time = time.Now().UnixNano()
	if e.DisplayMessage == "" {
		e.DisplayMessage = e.Message
	}
	tr.ar.setTaskState(tr.task.Name, func(ts *structs.TaskState) {
		if fn != nil {
			fn(ts)
		}
		ts.Events = append(ts.Events, e)
	})
}

// finish marks the task dead, with a last event unless e is nil.
func (tr *taskRunner) finish(e *structs.TaskEvent, failed bool) {
	dead := func(ts *structs.TaskState) {
		ts.State = structs.TaskStateDead
		ts.Failed = failed
		ts.FinishedAt = time.Now()
	}
	if e == nil {
		tr.ar.setTaskState(tr.task.Name, dead)
		return
	}
	tr.event(e, dead)
}

func (tr *taskRunner) run(done func()) {
	defer done()
	restoring := tr.restoredState != nil
	if restoring && tr.restoredState.State == structs.TaskStateDead {
		// Ended before the agent restarted: it never runs again.
		return
	}
	if !restoring {
		if !tr.received {
			tr.event(&structs.TaskEvent{Type: structs.TaskEventReceived, Message: "Task received by client"}, nil)
		}
		if tr.killed() {
			// Its turn never came (alloc_lifecycle.go): nothing is set up or started.
			tr.finish(&structs.TaskEvent{Type: structs.TaskEventKilled, KillReason: tr.killReason,
				Message: "Task not started: " + tr.killReason}, false)
			return
		}
	}
	driver := tr.ar.c.drivers[tr.task.Driver]
	if driver == nil {
		tr.finish(&structs.TaskEvent{Type: structs.TaskEventDriverFailure, FailsTask: true,
			DriverError: fmt.Sprintf("driver %q is not available on this node", tr.task.Driver),
			Message:     fmt.Sprintf("driver %q is not available on this node", tr.task.Driver)}, true)
		return
	}
	if !restoring && tr.deniedUser() {
		// Checked before anything is created for the task.
		return
	}
	// A restored task runs as it was started (perhaps by a build that did not mount); only
	// a new start is refused.
	if _, ok := driver.(drivers.VolumeMounter); !ok && !restoring && len(tr.task.VolumeMounts) > 0 {
		msg := fmt.Sprintf("driver %q does not support volume_mount: it has no filesystem isolation to mount into; use the exec or docker driver", tr.task.Driver)
		tr.finish(&structs.TaskEvent{Type: structs.TaskEventSetupFailure, FailsTask: true, SetupError: msg, Message: msg}, true)
		return
	}
	cfg, err := tr.setup()
	if tr.templates != nil {
		defer tr.templates.Stop()
	}
	if err != nil {
		tr.finish(&structs.TaskEvent{Type: structs.TaskEventSetupFailure, FailsTask: true, SetupError: err.Error(), Message: err.Error()}, true)
		return
	}
	tr.mu.Lock()
	tr.cfg = cfg
	tr.mu.Unlock()
	// The logs are rotated for as long as this runner runs the task.
	stopRotate, rotated := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(rotated)
		if cfg.StdoutPath == "" {
			return // logs disabled: no file to rotate
		}
		last := ""
		rotateLogs(filepath.Dir(cfg.StdoutPath), tr.task.Name, taskLogLimits(tr.task.LogConfig), stopRotate, func(err error) {
			// Once per distinct failure, not every second.
			if err.Error() != last {
				last = err.Error()
				tr.ar.logger.Warn("rotating the task's logs failed", "task", tr.task.Name, "error", err)
			}
		})
	}()
	defer func() { close(stopRotate); <-rotated }()
	var handle drivers.TaskHandle
	if restoring {
		var done bool
		if handle, done = tr.recover(driver, cfg); done {
			return
		}
	} else {
		tr.event(&structs.TaskEvent{Type: structs.TaskEventSetup, Message: "Building Task Directory"}, nil)
	}

	// A restored task ran its first-render scripts before the agent restarted.
	firstRenderScripts := restoring
	for {
		if tr.killed() && handle == nil {
			tr.finish(&structs.TaskEvent{Type: structs.TaskEventKilled, KillReason: tr.killReason, Message: "Task killed: " + tr.killReason}, false)
			return
		}
		if tr.detached() {
			return
		}
		var res *drivers.ExitResult
		if handle == nil {
			// Again before every start: a task restored after an agent restart that was
			// not running, or restarts, runs under today's options. One re-attached as
			// running was started under the options of its time and is left alone.
			if tr.deniedUser() {
				return
			}
			if tr.mountErr != nil {
				tr.finish(&structs.TaskEvent{Type: structs.TaskEventSetupFailure, FailsTask: true,
					SetupError: tr.mountErr.Error(), Message: tr.mountErr.Error()}, true)
				return
			}
			if handle, err = tr.start(driver, cfg); err != nil {
				tr.event(&structs.TaskEvent{Type: structs.TaskEventDriverFailure, DriverError: err.Error(), Message: err.Error()}, nil)
				res = &drivers.ExitResult{Err: err}
			} else if !firstRenderScripts {
				// The templates rendered before this first start; their scripts need the
				// running task to run in.
				firstRenderScripts = true
				for _, s := range firstRenderChangeScripts(tr.task) {
					tr.templateScript(cfg, s)
				}
			}
		}
		if handle != nil {
			restart, reason := false, "User requested restart"
			var tmplChanges <-chan template.Change
			var tmplFailed <-chan error
			if tr.templates != nil {
				tmplChanges, tmplFailed = tr.templates.Changes(), tr.templates.Failed()
			}
		wait:
			for {
				select {
				case res = <-handle.WaitCh():
				case <-tr.killCh:
					tr.stop(handle, tr.killFails)
					return
				case <-tr.detachCh:
					if !tr.reattachable(handle) {
						// Started as the agent stopped, by a driver that cannot find it again.
						tr.kill("agent shutting down: " + tr.task.Driver + " tasks cannot be re-attached")
						tr.stop(handle, false)
					}
					return
				case req := <-tr.restartCh:
					restart, reason = !req.failure, req.reason
					res = tr.killForRestart(handle, reason)
				case c := <-tmplChanges:
					if !c.Restart {
						for _, sig := range c.Signals {
							tr.templateSignal(handle, sig)
						}
						for _, s := range c.Scripts {
							tr.templateScript(cfg, s)
						}
						continue wait
					}
					// Started again with what the env templates give now.
					cfg = withTemplateEnv(cfg, tr.baseEnv, c.Env)
					tr.mu.Lock()
					tr.cfg = cfg
					tr.mu.Unlock()
					restart, reason = true, "Template with change_mode restart re-rendered"
					res = tr.killForRestart(handle, reason)
				case err := <-tmplFailed:
					// The data the task was started with can no longer be followed:
					// upstream kills the task, and it counts as failed.
					tr.killFails = true
					tr.kill(err.Error())
					continue wait
				}
				break
			}
			handle = nil
			tr.forgetHandle()
			terminated := &structs.TaskEvent{Type: structs.TaskEventTerminated, ExitCode: res.ExitCode, Signal: res.Signal,
				Message: "Task terminated: " + res.String()}
			if res.OOMKilled {
				// Upstream's detail key, which tools read to tell an OOM kill from another.
				terminated.Details = map[string]string{"oom_killed": "true"}
			}
			tr.event(terminated, nil)
			if restart && !tr.killed() {
				// Asked for: started again at once, not counted against the restart policy.
				tr.event(&structs.TaskEvent{Type: structs.TaskEventRestarting, RestartReason: reason,
					Message: "Task restarting: " + reason}, func(ts *structs.TaskState) {
					ts.State = structs.TaskStatePending
					ts.Restarts++
					ts.LastRestart = time.Now()
				})
				continue
			}
		}
		if tr.killed() {
			tr.finish(&structs.TaskEvent{Type: structs.TaskEventKilled, KillReason: tr.killReason, Message: "Task killed: " + tr.killReason}, false)
			return
		}
		if tr.batch && res.Successful() {
			tr.finish(nil, false)
			return
		}
		if tr.batch && errors.Is(res.Err, drivers.ErrExitCodeLost) {
			// It may well have completed: a batch task is never run a second time on a
			// guess. A service, meant to run on, goes through its restart policy.
			tr.finish(&structs.TaskEvent{Type: structs.TaskEventNotRestarting, FailsTask: true,
				Message: "Not restarting a batch task whose exit code is unknown after an agent restart: it may have completed"}, true)
			return
		}
		delay, ok := tr.policy.next(time.Now())
		if !ok {
			tr.finish(&structs.TaskEvent{Type: structs.TaskEventNotRestarting, FailsTask: !res.Successful(),
				Message: "Exceeded allowed attempts, applying a delay or failing"}, !res.Successful())
			return
		}
		tr.event(&structs.TaskEvent{Type: structs.TaskEventRestarting, StartDelay: int64(delay),
			RestartReason: "Restart within policy", Message: fmt.Sprintf("Task restarting in %s", delay)}, func(ts *structs.TaskState) {
			ts.State = structs.TaskStatePending
			ts.Restarts++
			ts.LastRestart = time.Now()
		})
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-tr.killCh:
			t.Stop()
		case <-tr.detachCh:
			t.Stop()
			return
		}
	}
}

// deniedUser fails the task, for good, when the client's options forbid its user for its
// driver (user.denylist, user.checked_drivers), and reports whether it did.
func (tr *taskRunner) deniedUser() bool {
	err := tr.ar.c.users.check(tr.task.Driver, tr.task.User)
	if err == nil {
		return false
	}
	tr.finish(&structs.TaskEvent{Type: structs.TaskEventSetupFailure, FailsTask: true, SetupError: err.Error(), Message: err.Error()}, true)
	return true
}

// killForRestart stops the running task for an in-place restart and returns how it ended.
func (tr *taskRunner) killForRestart(handle drivers.TaskHandle, reason string) *drivers.ExitResult {
	tr.event(&structs.TaskEvent{Type: structs.TaskEventRestartSignal, RestartReason: reason,
		Message: reason}, nil)
	if err := handle.Kill(tr.killTimeout()); err != nil {
		tr.event(&structs.TaskEvent{Type: structs.TaskEventKilling, KillError: err.Error(), Message: err.Error()}, nil)
	}
	return <-handle.WaitCh()
}

func (tr *taskRunner) killTimeout() time.Duration {
	if tr.task.KillTimeout != nil {
		return *tr.task.KillTimeout
	}
	return 5 * time.Second
}

// stop kills a running task and records how it ended, failed or not.
func (tr *taskRunner) stop(handle drivers.TaskHandle, failed bool) {
	var res *drivers.ExitResult
	if delay := tr.ar.shutdownDelay(tr.task, tr.tg); delay > 0 {
		tr.event(&structs.TaskEvent{Type: structs.TaskEventWaitingShutdownDelay, Message: "Waiting for shutdown delay of " + delay.String()}, nil)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case res = <-handle.WaitCh(): // ended by itself while waiting: nothing left to kill
			t.Stop()
		case <-tr.detachCh:
			// The agent leaves its tasks running for its next run, which stops this one.
			t.Stop()
			return
		}
	}
	if res == nil {
		timeout := tr.killTimeout()
		tr.event(&structs.TaskEvent{Type: structs.TaskEventKilling, KillReason: tr.killReason, KillTimeout: timeout,
			Message: "Sent interrupt: " + tr.killReason}, nil)
		if err := handle.Kill(timeout); err != nil {
			tr.event(&structs.TaskEvent{Type: structs.TaskEventKilling, KillError: err.Error(), Message: err.Error()}, nil)
		}
		res = <-handle.WaitCh()
	}
	tr.forgetHandle()
	tr.finish(&structs.TaskEvent{Type: structs.TaskEventKilled, ExitCode: res.ExitCode, Signal: res.Signal,
		KillReason: tr.killReason, FailsTask: failed, Message: "Task successfully killed"}, failed)
}

// setup creates the task's directories and builds its driver configuration. Every path is
// built by allocdir, which refuses one that would leave the allocation's directory whatever
// the task's name (the allocation runner checked the names, this is the second lock).
func (tr *taskRunner) setup() (*drivers.TaskConfig, error) {
	root := tr.ar.c.config.AllocDir
	mounts, err := taskMounts(tr.tg, tr.task, tr.ar.c.config.HostVolumes)
	if err != nil {
		if tr.restoredState == nil {
			return nil, err
		}
		// A restored task keeps the mounts it was started with, whatever the node's
		// host_volume blocks say now; a new start of it is refused (mountErr).
		tr.ar.logger.Warn("host volumes not resolved for a restored task", "task", tr.task.Name, "error", err)
		tr.mountErr, mounts = err, nil
	}
	allocDir, err := allocdir.Join(root, tr.alloc.ID, "alloc")
	if err != nil {
		return nil, err
	}
	taskDir, err := allocdir.Join(root, tr.alloc.ID, tr.task.Name)
	if err != nil {
		return nil, fmt.Errorf("task directory: %w", err)
	}
	for _, sub := range []string{"local", "secrets", "tmp"} {
		if err := allocdir.MkdirAll(root, filepath.Join(taskDir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("creating task directory: %w", err)
		}
	}
	if err := tr.writeDispatchPayload(taskDir); err != nil {
		return nil, err
	}
	stdout, err := allocdir.Join(allocDir, "logs", LogFileName(tr.task.Name, "stdout"))
	if err != nil {
		return nil, err
	}
	stderr, err := allocdir.Join(allocDir, "logs", LogFileName(tr.task.Name, "stderr"))
	if err != nil {
		return nil, err
	}
	if logsDisabled(tr.task.LogConfig) {
		stdout, stderr = "", ""
	}
	ports := groupPorts(tr.alloc, tr.tg)
	env := tr.taskEnv(allocDir, taskDir, ports)
	token, err := tr.setupIdentities(taskDir, env)
	if err != nil {
		if tr.restoredState == nil {
			return nil, err
		}
		// A task restored after an agent restart is already running with what it was
		// given; an identity not refreshed now is no reason to fail it.
		tr.ar.logger.Warn("workload identities not refreshed for a restored task", "task", tr.task.Name, "error", err)
	}
	tr.baseEnv = env.Map()
	if tr.restoredState == nil {
		// A restored task has its artifacts from its first start.
		if err := tr.fetchArtifacts(filepath.Dir(allocDir), env); err != nil {
			return nil, err
		}
	}
	if tr.templates, err = tr.setupTemplates(taskDir, env, token); err != nil {
		if tr.restoredState == nil {
			return nil, err
		}
		// A restored task runs with the files it was started with: it is not left
		// unwatched for a template, which then no longer follows its data.
		tr.ar.logger.Warn("templates not rendered again for a restored task: they no longer follow their data",
			"task", tr.task.Name, "error", err)
	}
	return &drivers.TaskConfig{
		AllocID:    tr.alloc.ID,
		JobName:    tr.alloc.Job.Name,
		GroupName:  tr.alloc.TaskGroup,
		TaskName:   tr.task.Name,
		Config:     env.ReplaceConfig(tr.task.Config),
		Env:        env.Map(),
		TaskDir:    taskDir,
		AllocDir:   allocDir,
		StdoutPath: stdout,
		StderrPath: stderr,
		KillSignal: tr.task.KillSignal,
		User:       tr.task.User,
		Resources:  taskResources(tr.task.Resources),
		Ports:      ports,
		Mounts:     mounts,
		NetNS:      tr.ar.netNSPath(),
		ResolvConf: tr.ar.resolvConfPath(),
		Event: func(msg string) {
			tr.event(&structs.TaskEvent{Type: structs.TaskEventDriverMessage, DriverMessage: msg, Message: msg}, nil)
		},
	}, nil
}

func taskResources(r *api.Resources) drivers.TaskResources {
	var out drivers.TaskResources
	if r == nil {
		return out
	}
	for _, f := range []struct {
		src *int
		dst *int
	}{{r.CPU, &out.CPU}, {r.MemoryMB, &out.MemoryMB}, {r.MemoryMaxMB, &out.MemoryMaxMB}, {r.Cores, &out.Cores}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return out
}

// groupPorts are the ports the scheduler allocated to the allocation, or, while it allocates
// none, the group network's ports as the job gives them (static ones with their host port,
// dynamic ones with 0).
func groupPorts(alloc *structs.Allocation, tg *api.TaskGroup) []drivers.PortMapping {
	var out []drivers.PortMapping
	if ar := alloc.AllocatedResources; ar != nil && len(ar.Shared.Ports) > 0 {
		for _, p := range ar.Shared.Ports {
			out = append(out, drivers.PortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: p.HostIP})
		}
		return out
	}
	for _, n := range tg.Networks {
		if n == nil {
			continue
		}
		for _, p := range n.ReservedPorts {
			out = append(out, drivers.PortMapping{Label: p.Label, Value: p.Value, To: p.To})
		}
		for _, p := range n.DynamicPorts {
			out = append(out, drivers.PortMapping{Label: p.Label, To: p.To})
		}
	}
	return out
}

// taskEnv builds the task's environment and the interpolation of its configuration
// (client/taskenv). Drivers that isolate the file system (exec's chroot, docker's
// container) mount the directories at /alloc, /local and /secrets: there the task sees
// those paths, and ${NOMAD_TASK_DIR} in its configuration must say so too.
func (tr *taskRunner) taskEnv(allocDir, taskDir string, ports []drivers.PortMapping) *taskenv.Env {
	in := taskenv.Input{
		Alloc: tr.alloc, Group: tr.tg, Task: tr.task, Node: tr.ar.c.node, Region: tr.ar.c.config.Region,
		AllocDir: allocDir, TaskDir: filepath.Join(taskDir, "local"), SecretsDir: filepath.Join(taskDir, "secrets"),
	}
	if isolatedFSDrivers[tr.task.Driver] {
		in.AllocDir, in.TaskDir, in.SecretsDir = "/alloc", "/local", "/secrets"
	}
	tr.ar.mu.Lock()
	if st := tr.ar.netStatus; st != nil {
		in.AllocIP = st.Address
	}
	tr.ar.mu.Unlock()
	for _, p := range ports {
		in.Ports = append(in.Ports, taskenv.Port{Label: p.Label, Value: p.Value, To: p.To, HostIP: p.HostIP})
	}
	return taskenv.New(in)
}

// isolatedFSDrivers run tasks in their own file system view, with the allocation's
// directories mounted at /alloc, /local and /secrets.
var isolatedFSDrivers = map[string]bool{"exec": true, "docker": true}

// restartPolicy decides whether a task that ended is started again, and after what delay.
type restartPolicy struct {
	attempts int
	interval time.Duration
	delay    time.Duration
	// delayMode waits out the interval once the attempts are used instead of failing.
	delayMode bool
	history   []time.Time
}

func newRestartPolicy(rp *api.RestartPolicy, batch bool) restartPolicy {
	// Upstream's defaults, which the job's canonicalisation normally fills already.
	p := restartPolicy{attempts: 2, interval: 30 * time.Minute, delay: 15 * time.Second}
	if batch {
		p.attempts, p.interval = 3, 24*time.Hour
	}
	if rp == nil {
		return p
	}
	if rp.Attempts != nil {
		p.attempts = *rp.Attempts
	}
	if rp.Interval != nil {
		p.interval = *rp.Interval
	}
	if rp.Delay != nil {
		p.delay = *rp.Delay
	}
	p.delayMode = rp.Mode != nil && *rp.Mode == api.RestartPolicyModeDelay
	return p
}

// next reports whether the task may restart at now and after how long.
func (p *restartPolicy) next(now time.Time) (time.Duration, bool) {
	kept := p.history[:0]
	for _, t := range p.history {
		if now.Sub(t) < p.interval {
			kept = append(kept, t)
		}
	}
	p.history = kept
	if len(p.history) < p.attempts {
		p.history = append(p.history, now)
		return p.delay, true
	}
	if !p.delayMode || len(p.history) == 0 {
		return 0, false
	}
	wait := p.interval - now.Sub(p.history[0])
	p.history = []time.Time{now.Add(wait)}
	return max(wait, p.delay), true
}
