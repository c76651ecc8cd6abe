package client

import (
	"strings"
	"sync"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// The order an allocation's tasks run in, from their lifecycle blocks (upstream's semantics):
//
//  1. prestart tasks: sidecars start and keep running; the others run to completion (once
//     per allocation, restarted only on failure);
//  2. main tasks (no lifecycle block), once every prestart task has completed and every
//     prestart sidecar runs;
//  3. poststart tasks, once every main task runs;
//  4. when every main task has ended, the sidecars are stopped;
//  5. poststop tasks, once everything else has ended — also when the allocation was stopped
//     or a task failed, but not when the agent shuts down or the allocation is removed.
//
// A leader task that ends stops the other tasks (poststop tasks still run). A task that a
// stop, a failure or a dead leader overtakes before its turn is recorded as killed, never
// started.

type lifecycleKind int

const (
	kindMain lifecycleKind = iota
	kindPrestart
	kindPrestartSidecar
	kindPoststart
	kindPoststartSidecar
	kindPoststop
)

func taskKind(t *api.Task) lifecycleKind {
	if t.Lifecycle == nil {
		return kindMain
	}
	switch t.Lifecycle.Hook {
	case api.TaskLifecycleHookPrestart:
		if t.Lifecycle.Sidecar {
			return kindPrestartSidecar
		}
		return kindPrestart
	case api.TaskLifecycleHookPoststart:
		if t.Lifecycle.Sidecar {
			return kindPoststartSidecar
		}
		return kindPoststart
	case api.TaskLifecycleHookPoststop:
		return kindPoststop
	}
	return kindMain
}

// runsToCompletion: the task ends by itself and is not started again once it succeeded,
// whatever the job's type.
func (k lifecycleKind) runsToCompletion() bool {
	return k == kindPrestart || k == kindPoststart || k == kindPoststop
}

// leaderDeadEvent is upstream's event type on the tasks a dead leader stops.
const leaderDeadEvent = "Leader Task Dead"

// phaseVerdict is what a wait on the task states decided.
type phaseVerdict int

const (
	phaseWait phaseVerdict = iota
	phaseProceed
	phaseAbort
)

// runTasks runs the allocation's tasks in lifecycle order and returns once every task it
// started has ended (or been left running for the agent's next run).
func (r *allocRunner) runTasks(tasks []*taskRunner) {
	var wg sync.WaitGroup
	started := map[*taskRunner]bool{}
	start := func(kinds ...lifecycleKind) {
		for _, tr := range tasks {
			if started[tr] || !hasKind(tr.kind, kinds) {
				continue
			}
			started[tr] = true
			wg.Add(1)
			go tr.run(wg.Done)
		}
	}
	of := func(kind lifecycleKind) []*taskRunner {
		var out []*taskRunner
		for _, tr := range tasks {
			if tr.kind == kind {
				out = append(out, tr)
			}
		}
		return out
	}
	mains := of(kindMain)

	announceWaits(tasks)
	start(kindPrestart, kindPrestartSidecar)
	ok := r.waitPhase(true, func(states map[string]*structs.TaskState) phaseVerdict {
		return allOf(states, of(kindPrestart), completed).and(allOf(states, of(kindPrestartSidecar), running))
	})
	if ok {
		start(kindMain)
		ok = r.waitPhase(true, func(states map[string]*structs.TaskState) phaseVerdict {
			return phaseVerdict(allOf(states, mains, running))
		})
	}
	reason := "allocation ended before the task's turn"
	if ok {
		start(kindPoststart, kindPoststartSidecar)
		// Until every main task has ended. A leader that ends first ends the others: the
		// wait stops for it (decide runs under r.mu, which the kill's events take), the kill
		// runs here, and the wait goes on.
		mainsEnded := func(states map[string]*structs.TaskState) phaseVerdict {
			return phaseVerdict(allOf(states, mains, ended))
		}
		leaderEnded := false
		r.waitPhase(false, func(states map[string]*structs.TaskState) phaseVerdict {
			if leaderDead(states, tasks) {
				leaderEnded = true
				return phaseProceed
			}
			return mainsEnded(states)
		})
		if leaderEnded {
			r.killForLeader(tasks)
			r.waitPhase(false, mainsEnded)
		}
		reason = "main tasks have ended"
	}
	r.mu.Lock()
	detached := r.detached
	r.mu.Unlock()
	if detached {
		// The agent is leaving its tasks running for its next run, which picks the order up
		// again from the stored states.
		wg.Wait()
		return
	}
	// The sidecars end with the main tasks; whatever has not run yet (a stop, a failure or
	// a dead leader came first) is started already killed, so it ends recorded as such.
	r.killAll(reason)
	start(kindMain, kindPrestart, kindPrestartSidecar, kindPoststart, kindPoststartSidecar)
	if !r.waitPhase(false, func(states map[string]*structs.TaskState) phaseVerdict {
		var others []*taskRunner
		for _, tr := range tasks {
			if tr.kind != kindPoststop {
				others = append(others, tr)
			}
		}
		return phaseVerdict(allOf(states, others, ended))
	}) {
		// Leaving (removed, agent shutdown): the poststop tasks do not run now, and do not
		// stay pending either.
		for _, tr := range of(kindPoststop) {
			tr.kill("allocation removed or agent shutting down")
		}
	}
	start(kindPoststop)
	wg.Wait()
}

// announceWaits gives each task that does not start at once, in a fresh allocation, its
// Received event and a message naming what it waits for, so that a pending task says why.
func announceWaits(tasks []*taskRunner) {
	names := func(kinds ...lifecycleKind) []string {
		var out []string
		for _, tr := range tasks {
			if hasKind(tr.kind, kinds) {
				out = append(out, tr.task.Name)
			}
		}
		return out
	}
	var prestart []string
	if done := names(kindPrestart); len(done) > 0 {
		prestart = append(prestart, "prestart tasks to complete: "+strings.Join(done, ", "))
	}
	if up := names(kindPrestartSidecar); len(up) > 0 {
		prestart = append(prestart, "prestart sidecars to run: "+strings.Join(up, ", "))
	}
	for _, tr := range tasks {
		if tr.restoredState != nil {
			continue // the order picks up from the stored states
		}
		var waitsFor string
		switch tr.kind {
		case kindMain:
			if len(prestart) > 0 {
				waitsFor = strings.Join(prestart, "; ")
			}
		case kindPoststart, kindPoststartSidecar:
			waitsFor = "main tasks to run: " + strings.Join(names(kindMain), ", ")
		case kindPoststop:
			waitsFor = "the other tasks to end"
		}
		if waitsFor == "" {
			continue
		}
		tr.received = true
		tr.event(&structs.TaskEvent{Type: structs.TaskEventReceived, Message: "Task received by client"}, nil)
		tr.event(&structs.TaskEvent{Type: structs.TaskEventHookMessage, Message: "Waiting for " + waitsFor}, nil)
	}
}

func hasKind(k lifecycleKind, kinds []lifecycleKind) bool {
	for _, want := range kinds {
		if k == want {
			return true
		}
	}
	return false
}

// waitPhase blocks until decide proceeds or aborts on the task states, or the runner is
// left (detached, silenced, removed), or, with haltOnStop, the servers stop the allocation;
// it reports whether decide proceeded.
func (r *allocRunner) waitPhase(haltOnStop bool, decide func(states map[string]*structs.TaskState) phaseVerdict) bool {
	for {
		r.mu.Lock()
		verdict := decide(r.states)
		gone := r.detached || r.silent || r.destroyed
		stopping := r.stopping
		r.mu.Unlock()
		switch {
		case verdict == phaseProceed:
			return !gone
		case verdict == phaseAbort || gone:
			return false
		case stopping && haltOnStop:
			// The servers stopped the allocation: no further phase starts.
			return false
		}
		<-r.stateCh
	}
}

// stateSet is the verdict of one group of tasks; and combines two.
type stateSet phaseVerdict

func (a stateSet) and(b stateSet) phaseVerdict {
	if a == stateSet(phaseAbort) || b == stateSet(phaseAbort) {
		return phaseAbort
	}
	if a == stateSet(phaseProceed) && b == stateSet(phaseProceed) {
		return phaseProceed
	}
	return phaseWait
}

// allOf applies a per-task verdict to every task of trs: abort if one aborts, proceed when
// all proceed.
func allOf(states map[string]*structs.TaskState, trs []*taskRunner, each func(*structs.TaskState) phaseVerdict) stateSet {
	verdict := phaseProceed
	for _, tr := range trs {
		switch each(states[tr.task.Name]) {
		case phaseAbort:
			return stateSet(phaseAbort)
		case phaseWait:
			verdict = phaseWait
		}
	}
	return stateSet(verdict)
}

// completed: a run-to-completion task has succeeded; one that failed for good aborts.
func completed(ts *structs.TaskState) phaseVerdict {
	switch {
	case ts == nil || ts.State != structs.TaskStateDead:
		return phaseWait
	case ts.Failed:
		return phaseAbort
	}
	return phaseProceed
}

// running: a long-running task has started; one that ended aborts the phase.
func running(ts *structs.TaskState) phaseVerdict {
	switch {
	case ts == nil:
		return phaseWait
	case ts.State == structs.TaskStateRunning:
		return phaseProceed
	case ts.State == structs.TaskStateDead:
		return phaseAbort
	}
	return phaseWait
}

// ended: the task is dead, however it ended.
func ended(ts *structs.TaskState) phaseVerdict {
	if ts != nil && ts.State == structs.TaskStateDead {
		return phaseProceed
	}
	return phaseWait
}

func leaderDead(states map[string]*structs.TaskState, tasks []*taskRunner) bool {
	for _, tr := range tasks {
		if tr.task.Leader {
			if ts := states[tr.task.Name]; ts != nil && ts.State == structs.TaskStateDead {
				return true
			}
		}
	}
	return false
}

// killForLeader stops every task but the poststop ones, each with upstream's event first.
func (r *allocRunner) killForLeader(tasks []*taskRunner) {
	for _, tr := range tasks {
		if tr.task.Leader || tr.kind == kindPoststop || tr.killed() {
			continue
		}
		r.mu.Lock()
		ts := r.states[tr.task.Name]
		r.mu.Unlock()
		if ts != nil && ts.State == structs.TaskStateDead {
			continue
		}
		tr.event(&structs.TaskEvent{Type: leaderDeadEvent, Message: "Leader Task Dead"}, nil)
		tr.kill("leader task dead")
	}
}

// notifyState wakes runTasks' wait after a task state or the runner's mode changed.
func (r *allocRunner) notifyState() {
	select {
	case r.stateCh <- struct{}{}:
	default:
	}
}
