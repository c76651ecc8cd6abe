package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
)

// What lets a task outlive the agent: its handle is stored before it is reported running,
// forgotten when it ends, and a restarted agent re-attaches to it (recover) instead of
// starting it again. A shutdown that leaves tasks running detaches their runners.

// start starts the task and stores how to find it again before it is reported running: a
// restarted agent that finds the task in the state file re-attaches instead of starting it
// a second time.
func (tr *taskRunner) start(driver drivers.Driver, cfg *drivers.TaskConfig) (drivers.TaskHandle, error) {
	handle, err := driver.Start(cfg)
	if err != nil {
		return nil, err
	}
	if p, ok := handle.(drivers.Persistent); ok && tr.reattachable(handle) {
		if err := tr.ar.c.state.putHandle(tr.alloc.ID, tr.task.Name, p.HandleState()); err != nil {
			tr.ar.logger.Error("storing the task handle failed: a restarted agent will not find this task",
				"task", tr.task.Name, "error", err)
		}
	}
	tr.mu.Lock()
	tr.handle = handle
	tr.mu.Unlock()
	tr.event(&structs.TaskEvent{Type: structs.TaskEventStarted, Message: "Task started by client"}, func(ts *structs.TaskState) {
		ts.State = structs.TaskStateRunning
		ts.StartedAt = time.Now()
	})
	return handle, nil
}

// forgetHandle drops the ended task's handle, here and in the state file.
func (tr *taskRunner) forgetHandle() {
	tr.mu.Lock()
	tr.handle = nil
	tr.mu.Unlock()
	if err := tr.ar.c.state.putHandle(tr.alloc.ID, tr.task.Name, nil); err != nil {
		tr.ar.logger.Warn("removing the task handle from the client state failed", "task", tr.task.Name, "error", err)
	}
}

// recover re-attaches to a task a previous run of the agent started. It returns the task's
// handle when the driver finds it (still running, or ended with a known exit, which the run
// loop then handles as any exit); a nil handle when it is to be started (it never was, or it
// waited for a restart); done when it is gone and how it ended is lost (a raw_exec task that
// ended while the agent was down): it is reported dead and failed, not restarted, and the
// servers' rescheduling decides what comes next.
func (tr *taskRunner) recover(driver drivers.Driver, cfg *drivers.TaskConfig) (drivers.TaskHandle, bool) {
	st := tr.restoredHandle
	if st == nil {
		if tr.restoredState.State == structs.TaskStateRunning {
			// Reported running with no handle stored: the driver cannot find such a task.
			tr.finish(&structs.TaskEvent{Type: structs.TaskEventTerminated, FailsTask: true,
				Message: "Task not found after the agent restarted: no handle was stored to find it (its driver cannot re-attach, or it stopped with the agent)"}, true)
			return nil, true
		}
		return nil, false
	}
	rec, ok := driver.(drivers.Recoverer)
	var handle drivers.TaskHandle
	err := fmt.Errorf("driver %q cannot re-attach to tasks", tr.task.Driver)
	if ok {
		handle, err = rec.Recover(cfg, st)
	}
	if err != nil {
		tr.forgetHandle()
		msg := "Task lost while the agent was down: " + err.Error()
		if errors.Is(err, drivers.ErrTaskNotFound) {
			msg = "Task exited while the agent was down: its exit code was lost"
		}
		tr.finish(&structs.TaskEvent{Type: structs.TaskEventTerminated, FailsTask: true, Message: msg}, true)
		return nil, true
	}
	tr.mu.Lock()
	tr.handle = handle
	tr.mu.Unlock()
	tr.ar.logger.Info("re-attached to task", "task", tr.task.Name, "pid", handle.PID())
	tr.ar.setTaskState(tr.task.Name, func(ts *structs.TaskState) { ts.State = structs.TaskStateRunning })
	return handle, false
}

func (tr *taskRunner) detach() {
	// A task its driver cannot find again would run on with no one to stop it: it is killed
	// instead, as every task was before tasks outlived the agent.
	if h := tr.runningHandle(); h != nil && !tr.reattachable(h) {
		tr.kill("agent shutting down: " + tr.task.Driver + " tasks cannot be re-attached")
		return
	}
	tr.detachOnce.Do(func() { close(tr.detachCh) })
}

// reattachable reports whether a restarted agent can find the task of h again.
func (tr *taskRunner) reattachable(h drivers.TaskHandle) bool {
	_, persistent := h.(drivers.Persistent)
	_, recoverer := tr.ar.c.drivers[tr.task.Driver].(drivers.Recoverer)
	return persistent && recoverer
}

func (tr *taskRunner) detached() bool {
	return isClosed(tr.detachCh)
}
