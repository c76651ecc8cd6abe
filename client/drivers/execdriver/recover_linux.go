package execdriver

import (
	"github.com/nomadfork/nomad/client/drivers"
)

// Recover implements drivers.Recoverer: the task's shim is found by PID and start time and
// watched until it ends; its exit file then says how the task ended (an OOM kill included).
// A task that ended while no agent ran is known by its exit file alone. A re-attached task
// is tracked again for alloc exec, which joins its process (checked by its own start time)
// and cgroup; its output goes on to the log files the shim holds.
func (d *Driver) Recover(cfg *drivers.TaskConfig, st *drivers.HandleState) (drivers.TaskHandle, error) {
	if st == nil || st.PID <= 0 || st.ExitFile == "" || len(st.Cgroups) == 0 {
		return nil, drivers.ErrTaskNotFound
	}
	host, _, sig, ic, err := d.prepare(cfg)
	if err != nil {
		return nil, err
	}
	cg := &taskCgroup{mode: host.mode, dirs: append([]string(nil), st.Cgroups...)}
	h := &Handle{
		shimPID: st.PID, shimTicks: st.StartTime, exitFile: st.ExitFile,
		cg: cg, logger: d.opts.Logger, killSignal: sig, cfg: ic,
		state:  TaskState{PID: st.TaskPID, StartTicks: st.TaskStartTime, CgroupPath: cg.Path(), Cgroups: cg.dirs},
		waitCh: make(chan *drivers.ExitResult, 1), done: make(chan struct{}),
	}
	if st.StartTime == 0 || !drivers.ProcAlive(st.PID, st.StartTime) {
		if _, ok := drivers.ReadExitFile(st.ExitFile); !ok {
			// Nothing can tell how it ended; whatever is left in its cgroup has no one to
			// watch it.
			if err := cg.destroy(); err != nil {
				d.opts.Logger.Warn("exec: task cgroup not removed", "error", err)
			}
			return nil, drivers.ErrTaskNotFound
		}
		h.finish(func() {}, nil)
		return h, nil
	}
	key := taskKey(cfg.AllocID, cfg.TaskName)
	d.track(key, h)
	d.holdCores(key, pinnedCores(cg))
	go h.watchShim(func() { d.untrack(key, h) })
	return h, nil
}

var _ drivers.Recoverer = (*Driver)(nil)
