package drainer

import (
	"sort"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Decision is what one look at the state asks for.
type Decision struct {
	// Migrate are the allocations to mark for migration; Jobs are their jobs, to evaluate.
	Migrate []*structs.Allocation
	Jobs    map[structs.NamespacedID]*structs.Job
	// Complete are the nodes whose drain is done, with the strategy that was seen.
	Complete map[string]*api.DrainStrategy
	// Wake is when something changes without a write (a deadline passes, an allocation
	// becomes healthy); zero when nothing is waited for.
	Wake time.Time
	// Draining reports whether any node has a drain strategy: without one, only a change of
	// the nodes can give the drainer work.
	Draining bool
}

// IsEmpty reports whether the decision writes nothing.
func (d *Decision) IsEmpty() bool { return len(d.Migrate) == 0 && len(d.Complete) == 0 }

func (d *Decision) wakeAt(t time.Time) {
	if d.Wake.IsZero() || t.Before(d.Wake) {
		d.Wake = t
	}
}

// groupKey names a task group of a job.
type groupKey struct {
	ns, job, group string
}

// Decide looks at every draining node in store (a point-in-time view) at now.
//
// On a node before its deadline: service allocations leave group by group, at most
// max_parallel of a group's healthy allocations at a time (healthy: running for
// min_healthy_time); an allocation that is not running leaves at once, since it serves
// nothing the migration could take away. Batch allocations are left to finish. System
// allocations leave once nothing else is left, unless the drain ignores them. At the
// deadline everything left is marked. A node with nothing left (system allocations aside
// when ignored) has completed its drain.
func Decide(store *state.StateStore, now time.Time) (*Decision, error) {
	d := &Decision{Complete: map[string]*api.DrainStrategy{}}
	nodes, err := store.Nodes(nil, "")
	if err != nil {
		return nil, err
	}
	draining := map[string]bool{}
	for _, n := range nodes {
		if n.DrainStrategy != nil {
			draining[n.ID] = true
		}
	}
	if len(draining) == 0 {
		return d, nil
	}
	d.Draining = true
	jobs := map[structs.NamespacedID]*structs.Job{}
	jobOf := func(ns, id string) (*structs.Job, error) {
		key := structs.NamespacedID{Namespace: ns, ID: id}
		if j, ok := jobs[key]; ok {
			return j, nil
		}
		j, err := store.JobByID(nil, ns, id)
		jobs[key] = j
		return j, err
	}
	marked := map[string]bool{}
	mark := func(a *structs.Allocation) {
		if !marked[a.ID] && !migrating(a) {
			marked[a.ID] = true
			d.Migrate = append(d.Migrate, a)
		}
	}
	// Service allocations waiting for their group's budget, by group, in node order.
	waiting := map[groupKey][]*structs.Allocation{}
	var groups []groupKey
	for _, n := range nodes {
		ds := n.DrainStrategy
		if ds == nil {
			continue
		}
		allocs, err := store.AllocsByNode(nil, n.ID)
		if err != nil {
			return nil, err
		}
		deadline, hasDeadline := structs.DrainDeadline(ds)
		past := hasDeadline && !now.Before(deadline)
		if hasDeadline && !past {
			d.wakeAt(deadline)
		}
		var service, batch, system []*structs.Allocation
		for _, a := range allocs {
			if a.TerminalStatus() {
				continue
			}
			job, err := jobOf(a.Namespace, a.JobID)
			if err != nil {
				return nil, err
			}
			typ := structs.JobTypeService
			switch {
			case job != nil:
				typ = job.Type
			case a.Job != nil:
				typ = a.Job.Type
			}
			switch typ {
			case structs.JobTypeSystem, structs.JobTypeSysBatch:
				if !ds.IgnoreSystemJobs {
					system = append(system, a)
				}
			case structs.JobTypeBatch:
				batch = append(batch, a)
			default:
				service = append(service, a)
			}
		}
		if len(service)+len(batch)+len(system) == 0 {
			d.Complete[n.ID] = ds
			continue
		}
		if past {
			for _, a := range append(append(service, batch...), system...) {
				mark(a)
			}
			continue
		}
		if len(service)+len(batch) == 0 {
			for _, a := range system {
				mark(a)
			}
			continue
		}
		for _, a := range service {
			if migrating(a) {
				continue
			}
			key := groupKey{a.Namespace, a.JobID, a.TaskGroup}
			if waiting[key] == nil {
				groups = append(groups, key)
			}
			waiting[key] = append(waiting[key], a)
		}
	}
	for _, key := range groups {
		job, err := jobOf(key.ns, key.job)
		if err != nil {
			return nil, err
		}
		if job == nil || job.Stop || job.LookupTaskGroup(key.group) == nil {
			continue // the scheduler stops these whatever the drain
		}
		if err := decideGroup(store, d, job, key.group, waiting[key], now, mark); err != nil {
			return nil, err
		}
	}
	d.Jobs = map[structs.NamespacedID]*structs.Job{}
	for _, a := range d.Migrate {
		id := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
		if d.Jobs[id] != nil {
			continue
		}
		job, err := jobOf(a.Namespace, a.JobID)
		if err != nil {
			return nil, err
		}
		if job == nil {
			job = a.Job
		}
		if job != nil {
			d.Jobs[id] = job
		}
	}
	return d, nil
}

// decideGroup marks the group's allocations on draining nodes that may leave now: unhealthy
// ones that are not running at once, healthy running ones while the group keeps count -
// max_parallel healthy allocations; a running one not yet healthy waits.
func decideGroup(store *state.StateStore, d *Decision, job *structs.Job, group string, candidates []*structs.Allocation,
	now time.Time, mark func(*structs.Allocation)) error {
	tg := job.LookupTaskGroup(group)
	strategy := migrateStrategy(tg.Migrate)
	count := 0
	if tg.Count != nil {
		count = *tg.Count
	}
	all, err := store.AllocsByJob(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	healthyCount := 0
	for _, a := range all {
		if a.TaskGroup != group || a.TerminalStatus() || migrating(a) {
			continue
		}
		ok, at := healthy(a, strategy, now)
		if ok {
			healthyCount++
		} else if !at.IsZero() {
			d.wakeAt(at)
		}
	}
	budget := healthyCount - (count - *strategy.MaxParallel)
	// The same state gives the same choice on every leader.
	sort.Slice(candidates, func(i, j int) bool { return candidates[i].ID < candidates[j].ID })
	for _, a := range candidates {
		if a.ClientStatus != structs.AllocClientStatusRunning {
			mark(a) // not running: nothing it serves is lost by moving it
			continue
		}
		if ok, _ := healthy(a, strategy, now); ok && budget > 0 {
			mark(a)
			budget--
		}
	}
	return nil
}

// migrateStrategy is the group's migrate block with upstream's defaults filled in.
func migrateStrategy(m *api.MigrateStrategy) *api.MigrateStrategy {
	out := api.DefaultMigrateStrategy()
	if m == nil {
		return out
	}
	if m.MaxParallel != nil {
		out.MaxParallel = m.MaxParallel
	}
	if m.HealthCheck != nil {
		out.HealthCheck = m.HealthCheck
	}
	if m.MinHealthyTime != nil {
		out.MinHealthyTime = m.MinHealthyTime
	}
	if m.HealthyDeadline != nil {
		out.HealthyDeadline = m.HealthyDeadline
	}
	if *out.MaxParallel < 0 {
		zero := 0 // validation refuses it; a stored one moves nothing before the deadline
		out.MaxParallel = &zero
	}
	return out
}

// healthy reports whether an allocation counts as healthy for migration: its deployment
// health when it has one, otherwise every task running for min_healthy_time. (Check results
// stay on the client, which reports them only as deployment health, so outside a deployment
// health_check "checks" reads task states as "task_states" does.) When it
// will become healthy with time alone, at is when.
func healthy(a *structs.Allocation, m *api.MigrateStrategy, now time.Time) (ok bool, at time.Time) {
	if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
		return *a.DeploymentStatus.Healthy, time.Time{}
	}
	if a.ClientStatus != structs.AllocClientStatusRunning || len(a.TaskStates) == 0 {
		return false, time.Time{}
	}
	var latest time.Time
	for _, ts := range a.TaskStates {
		if ts == nil || ts.State != structs.TaskStateRunning || ts.StartedAt.IsZero() {
			return false, time.Time{}
		}
		if ts.StartedAt.After(latest) {
			latest = ts.StartedAt
		}
	}
	ready := latest.Add(*m.MinHealthyTime)
	if now.Before(ready) {
		return false, ready
	}
	return true, time.Time{}
}

func migrating(a *structs.Allocation) bool {
	return a.DesiredTransition.Migrate != nil && *a.DesiredTransition.Migrate
}
