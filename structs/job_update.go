package structs

import (
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"
)

// Update health checks: what the client watches to call an allocation of a deployment healthy.
const (
	UpdateHealthCheckChecks     = "checks"
	UpdateHealthCheckTaskStates = "task_states"
	UpdateHealthCheckManual     = "manual"
)

// The update block is the client library's api.UpdateStrategy; its Canonicalize fills
// upstream's defaults (max_parallel 1, min_healthy_time 10s, healthy_deadline 5m,
// progress_deadline 10m, stagger 30s, health_check "checks") and merges a group's block over
// the job's. The server reads the group's block only: it is the merged one.

// UpdateStrategyFor returns the group's update block when it asks for deployments: a service
// job's group whose max_parallel is above zero, or a system job's that also asks for canaries
// (without canaries a system job keeps its staggered update, max_parallel per stagger). Nil
// means the group is updated without a deployment.
func (j *Job) UpdateStrategyFor(tg *api.TaskGroup) *api.UpdateStrategy {
	if tg == nil || tg.Update == nil {
		return nil
	}
	switch j.Type {
	case JobTypeService:
	case JobTypeSystem:
		if tg.Update.Canary == nil || *tg.Update.Canary <= 0 {
			return nil
		}
	default:
		return nil
	}
	if tg.Update.MaxParallel == nil || *tg.Update.MaxParallel <= 0 {
		return nil
	}
	return tg.Update
}

// HasUpdateStrategy reports whether any group of the job is updated through deployments.
func (j *Job) HasUpdateStrategy() bool {
	for _, tg := range j.TaskGroups {
		if j.UpdateStrategyFor(tg) != nil {
			return true
		}
	}
	return false
}

// checkUpdate reports what is wrong with the job's update block and its groups' blocks, each
// message naming the field.
func checkUpdate(j *Job) []string {
	var msgs []string
	if j.Update != nil && (j.Type == JobTypeBatch || j.Type == JobTypeSysBatch) && !j.Update.Empty() {
		msgs = append(msgs, fmt.Sprintf("update: job type %q does not allow an update block", j.Type))
	}
	if j.Update != nil {
		msgs = append(msgs, checkUpdateStrategy("update", j.Update)...)
	}
	for _, tg := range j.TaskGroups {
		if tg == nil || tg.Update == nil {
			continue
		}
		where := fmt.Sprintf("group %s: update", quoteName(stringValue(tg.Name)))
		if (j.Type == JobTypeBatch || j.Type == JobTypeSysBatch) && !tg.Update.Empty() {
			msgs = append(msgs, fmt.Sprintf("%s: job type %q does not allow an update block", where, j.Type))
			continue
		}
		msgs = append(msgs, checkUpdateStrategy(where, tg.Update)...)
		if j.Type == JobTypeSystem && tg.Update.Canary != nil && *tg.Update.Canary > 0 {
			// A system job's canary is a percentage of the feasible nodes, as upstream's.
			if *tg.Update.Canary > 100 {
				msgs = append(msgs, fmt.Sprintf("%s: canary is a percentage of the feasible nodes for a system job: %d is over 100", where, *tg.Update.Canary))
			}
			if tg.Update.MaxParallel == nil || *tg.Update.MaxParallel <= 0 {
				msgs = append(msgs, where+": canary needs max_parallel above 0 for a system job (canaries are placed through a deployment)")
			}
		}
	}
	return msgs
}

func checkUpdateStrategy(where string, u *api.UpdateStrategy) []string {
	var msgs []string
	add := func(format string, args ...any) { msgs = append(msgs, where+": "+fmt.Sprintf(format, args...)) }
	dur := func(d *time.Duration) time.Duration {
		if d == nil {
			return 0
		}
		return *d
	}
	if u.MaxParallel != nil && *u.MaxParallel < 0 {
		add("max_parallel must not be negative, got %d", *u.MaxParallel)
	}
	if u.Canary != nil && *u.Canary < 0 {
		add("canary must not be negative, got %d", *u.Canary)
	}
	if u.AutoPromote != nil && *u.AutoPromote && (u.Canary == nil || *u.Canary <= 0) {
		add("auto_promote requires a canary count greater than zero")
	}
	if u.HealthCheck != nil {
		switch *u.HealthCheck {
		case "", UpdateHealthCheckChecks, UpdateHealthCheckTaskStates, UpdateHealthCheckManual:
		default:
			add("health_check must be one of %q, %q or %q, got %s", UpdateHealthCheckChecks,
				UpdateHealthCheckTaskStates, UpdateHealthCheckManual, quoteName(*u.HealthCheck))
		}
	}
	minHealthy, healthy, progress := dur(u.MinHealthyTime), dur(u.HealthyDeadline), dur(u.ProgressDeadline)
	if u.Stagger != nil && *u.Stagger < 0 {
		add("stagger must not be negative, got %s", *u.Stagger)
	}
	if minHealthy < 0 {
		add("min_healthy_time must not be negative, got %s", minHealthy)
	}
	if healthy < 0 {
		add("healthy_deadline must not be negative, got %s", healthy)
	}
	if progress < 0 {
		add("progress_deadline must not be negative, got %s", progress)
	}
	if u.HealthyDeadline != nil && minHealthy >= healthy && healthy >= 0 && minHealthy >= 0 {
		add("min_healthy_time (%s) must be less than healthy_deadline (%s)", minHealthy, healthy)
	}
	if progress > 0 && healthy >= progress {
		add("healthy_deadline (%s) must be less than progress_deadline (%s)", healthy, progress)
	}
	return msgs
}
