package client

import (
	"time"

	"github.com/nomadfork/nomad/structs"
)

// Allocation health in a deployment. When the servers place an allocation in a deployment (or
// update one in place into a new deployment), the runner watches its tasks: once every task
// has been running for the group's min_healthy_time, without a restart resetting the clock,
// the allocation is healthy; a task that dies, or a healthy_deadline reached first, makes it
// unhealthy. The verdict travels with the allocation's next status report, once per
// deployment; the servers take the first verdict and ignore the rest.
//
// With health_check "checks" (the default, as upstream) the checks of the allocation's nomad
// services count too (service_checks.go): the min_healthy_time clock starts once the tasks run
// and every healthiness check passes, and a check that fails again stops it; checks that never
// all pass leave the allocation to its healthy_deadline, which makes it unhealthy. With
// "manual", the client reports nothing and an operator sets the health through
// /v1/deployment/allocation-health.

// allocHealth is the runner's verdict for one deployment.
type allocHealth struct {
	deploymentID string
	healthy      *bool
	at           time.Time
}

// trackHealth starts watching the allocation's health when it has joined a deployment the
// runner has not judged yet. The watcher belongs to the runner: run stops and waits for it
// once the tasks end, and client shutdown ends it.
func (r *allocRunner) trackHealth() {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.alloc
	if a.DeploymentID == "" || a.DeploymentID == r.health.deploymentID || r.tasks == nil || r.stopping || r.destroyed || r.silent {
		return
	}
	if r.healthStop != nil {
		close(r.healthStop)
		r.healthStop = nil
	}
	r.health = allocHealth{deploymentID: a.DeploymentID}
	if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil {
		return // already judged (by an operator, or before this runner existed)
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || tg.Update == nil || (tg.Update.HealthCheck != nil && *tg.Update.HealthCheck == structs.UpdateHealthCheckManual) {
		return
	}
	var minHealthy, deadline time.Duration
	if tg.Update.MinHealthyTime != nil {
		minHealthy = *tg.Update.MinHealthyTime
	}
	if tg.Update.HealthyDeadline != nil {
		deadline = *tg.Update.HealthyDeadline
	}
	useChecks := tg.Update.HealthCheck == nil || *tg.Update.HealthCheck == "" || *tg.Update.HealthCheck == structs.UpdateHealthCheckChecks
	stop := make(chan struct{})
	r.healthStop = stop
	r.healthWG.Add(1)
	go r.watchHealth(a.DeploymentID, minHealthy, deadline, useChecks, stop)
}

// stopHealth ends the health watcher, if any, and waits for it.
func (r *allocRunner) stopHealth() {
	r.mu.Lock()
	if r.healthStop != nil {
		close(r.healthStop)
		r.healthStop = nil
	}
	r.mu.Unlock()
	r.healthWG.Wait()
}

// healthChanged wakes the watcher after a task state change.
func (r *allocRunner) healthChanged() {
	select {
	case r.healthNotify <- struct{}{}:
	default:
	}
}

func (r *allocRunner) watchHealth(deploymentID string, minHealthy, deadline time.Duration, useChecks bool, stop chan struct{}) {
	defer r.healthWG.Done()
	start := time.Now()
	var deadlineC <-chan time.Time
	if deadline > 0 {
		t := time.NewTimer(deadline)
		defer t.Stop()
		deadlineC = t.C
	}
	for {
		verdict, wait := r.judgeHealth(start, minHealthy, useChecks)
		if verdict != nil {
			r.setHealth(deploymentID, *verdict)
			return
		}
		// Once stopped, the states were judged one last time above: a task that died just
		// before its allocation's tasks all ended still counts.
		if r.c.ctx.Err() != nil || isClosed(stop) {
			return
		}
		if !r.waitHealth(wait, stop, deadlineC) {
			r.setHealth(deploymentID, false)
			return
		}
	}
}

// waitHealth waits for a task state change, wait (when above 0), a stop or shutdown; it
// reports false when the healthy deadline came first.
func (r *allocRunner) waitHealth(wait time.Duration, stop chan struct{}, deadlineC <-chan time.Time) bool {
	var waitC <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		waitC = t.C
	}
	select {
	case <-r.c.ctx.Done():
	case <-stop:
	case <-deadlineC:
		return false
	case <-r.healthNotify:
	case <-waitC:
	}
	return true
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// judgeHealth decides from the task states, and with useChecks the checks' results: a
// verdict, or how long to wait before looking again (0: until a task state or a check
// result changes).
func (r *allocRunner) judgeHealth(start time.Time, minHealthy time.Duration, useChecks bool) (*bool, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping || r.destroyed || r.silent {
		return nil, 0 // the servers stopped it: its tasks ending says nothing of its health
	}
	since := start
	kinds := map[string]lifecycleKind{}
	for _, tr := range r.tasks {
		kinds[tr.task.Name] = tr.kind
	}
	for name, ts := range r.states {
		kind := kinds[name]
		switch {
		case kind == kindPoststop:
			continue // runs once the allocation ends: no part of its health
		case kind.runsToCompletion() && ts.State == structs.TaskStateDead && !ts.Failed:
			continue // a prestart or poststart task that did its job
		case kind == kindPoststart && ts.State != structs.TaskStateDead:
			// Not yet run or still running: either way it does not hold health back,
			// as upstream.
			continue
		case ts.State == structs.TaskStateDead:
			return new(false), 0
		case ts.State != structs.TaskStateRunning:
			return nil, 0
		case ts.StartedAt.After(since):
			since = ts.StartedAt
		}
	}
	if len(r.states) == 0 {
		return nil, 0
	}
	if useChecks {
		// The checks were set under this lock with the task states just read.
		ok, passing := r.checks.Healthy()
		if !ok {
			return nil, 0
		}
		if passing.After(since) {
			since = passing
		}
	}
	if left := minHealthy - time.Since(since); left > 0 {
		return nil, left
	}
	return new(true), 0
}

// setHealth records the verdict and reports it.
func (r *allocRunner) setHealth(deploymentID string, healthy bool) {
	r.mu.Lock()
	if r.health.deploymentID != deploymentID || r.health.healthy != nil {
		r.mu.Unlock()
		return
	}
	r.health.healthy, r.health.at = &healthy, time.Now().UTC()
	r.mu.Unlock()
	r.logger.Info("allocation health decided", "deployment_id", deploymentID, "healthy", healthy)
	r.report()
}
