package client

import (
	"context"
	"io"
	"maps"
	"slices"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/servicecheck"
	"github.com/nomadfork/nomad/structs"
)

// The checks of an allocation's `provider = "nomad"` services run while their service is
// registered (allocServices): a group's while any of its tasks runs, a task's while it runs.
// The allocation runner owns their servicecheck.Runner: every task state change sets the
// checks that should run, and the runner's end stops them.

// newCheckRunner makes the allocation's checks runner: script checks run in their task as
// `alloc exec` does, check_restart restarts through the task runner's restart path, and
// every result wakes the health watcher.
func (r *allocRunner) newCheckRunner() *servicecheck.Runner {
	exec := func(ctx context.Context, task string, command []string, out io.Writer) (int, error) {
		t, tr, driver, err := r.c.localExecTask(r.id, task)
		if err != nil {
			return 0, err
		}
		if t.Err != nil {
			return 0, t.Err
		}
		return r.c.execIn(ctx, tr, driver, &drivers.ExecOptions{Command: command, Stdout: out, Stderr: out})
	}
	restart := func(task, reason string) {
		tasks := r.taskRunners()
		for _, tr := range tasks {
			if tr.task.Name == task {
				if err := tr.requestRestart(restartRequest{reason: reason, failure: true}); err != nil {
					r.logger.Debug("check_restart found the task not running", "task", task, "error", err)
				}
			}
		}
	}
	return servicecheck.NewRunner(r.logger.Named("checks"), exec, restart, r.healthChanged)
}

// Checks are the latest results of the checks of an allocation this client runs.
func (c *Client) Checks(allocID string) (api.AllocCheckStatuses, error) {
	r := c.runner(allocID)
	if r == nil {
		return nil, structs.NotFound(structs.ErrAllocNotFound)
	}
	return r.checks.Statuses(), nil
}

// allocChecks are the checks that should run with the given task states, resolved against
// the allocation: the address and port of their service (or the check's own port), and the
// task a script check runs in and check_restart restarts.
func allocChecks(node *structs.Node, alloc *structs.Allocation, states map[string]*structs.TaskState) []servicecheck.Spec {
	var out []servicecheck.Spec
	eachLiveNomadService(alloc, states, func(owner, task string, svc *api.Service) {
		for i := range svc.Checks {
			out = append(out, checkSpec(node, alloc, owner, task, svc, &svc.Checks[i]))
		}
	})
	return out
}

// checkSpec resolves one check. task is the task owning the service, "" for a group's.
func checkSpec(node *structs.Node, alloc *structs.Allocation, owner, task string, svc *api.Service, chk *api.ServiceCheck) servicecheck.Spec {
	name := chk.Name
	if name == "" {
		name = "service: \"" + svc.Name + "\" check"
	}
	target := svc
	if chk.PortLabel != "" {
		target = &api.Service{PortLabel: chk.PortLabel, Address: svc.Address}
	}
	addr, port := serviceAddress(node, alloc, target)
	execTask := task
	if chk.TaskName != "" {
		execTask = chk.TaskName
	}
	onUpdate := chk.OnUpdate
	if onUpdate == "" {
		onUpdate = svc.OnUpdate
	}
	if onUpdate == "" {
		onUpdate = servicecheck.OnUpdateRequireHealthy
	}
	// A check's own check_restart wins over its service's.
	cr := chk.CheckRestart
	if cr == nil {
		cr = svc.CheckRestart
	}
	var restart *servicecheck.Restart
	if cr != nil && cr.Limit > 0 {
		restart = &servicecheck.Restart{Limit: cr.Limit, IgnoreWarnings: cr.IgnoreWarnings}
		if cr.Grace != nil {
			restart.Grace = *cr.Grace
		}
	}
	return servicecheck.Spec{
		ID: servicecheck.CheckID(alloc.ID, owner, svc.Name, name), Name: name, Service: svc.Name,
		Group: alloc.Name, Task: task, Type: chk.Type,
		Address: addr, Port: port, Protocol: chk.Protocol, Path: chk.Path, Method: chk.Method,
		Header: maps.Clone(chk.Header), Body: chk.Body, TLSSkipVerify: chk.TLSSkipVerify, TLSServerName: chk.TLSServerName,
		Command: chk.Command, Args: slices.Clone(chk.Args), ExecTask: execTask,
		Interval: chk.Interval, Timeout: chk.Timeout, InitialStatus: chk.InitialStatus, OnUpdate: onUpdate,
		Restart: restart,
	}
}
