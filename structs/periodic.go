package structs

import (
	"fmt"
	"maps"
	"time"

	"github.com/hashicorp/cronexpr"
)

// PeriodicLaunchSuffix and DispatchLaunchSuffix join a parent's ID and a child's launch part,
// as upstream names children ("<parent>/periodic-<unix>", "<parent>/dispatch-<unix>-<hex>").
const (
	PeriodicLaunchSuffix = "/periodic-"
	DispatchLaunchSuffix = "/dispatch-"
)

// ActorPeriodicDispatcher is who launches periodic jobs on their schedule.
var ActorPeriodicDispatcher = &Actor{Type: ActorTypeSystem, Name: "periodic-dispatcher"}

// PeriodicLaunch is the last launch of a periodic job, kept durably (table periodic_launch)
// so that a new leader neither launches again what was launched nor forgets a launch that
// fell due while no leader ran the dispatcher. It is written in the same Raft entry as the
// child it launched.
type PeriodicLaunch struct {
	ID          string
	Namespace   string
	Launch      time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// IsPeriodicActive reports whether the leader launches children of the job on its schedule:
// a periodic, enabled, not stopped job that is not itself a parameterized template.
func (j *Job) IsPeriodicActive() bool {
	return j.IsPeriodic() && !j.Stop && !j.IsParameterized() &&
		(j.Periodic.Enabled == nil || *j.Periodic.Enabled)
}

// NextPeriodicLaunch is the first launch time of the job's schedule strictly after from, in
// the job's time zone; the zero time when the schedule has no further launch.
func (j *Job) NextPeriodicLaunch(from time.Time) (time.Time, error) {
	if j.Periodic == nil {
		return time.Time{}, fmt.Errorf("job %q is not periodic", j.ID)
	}
	loc := time.UTC
	if tz := j.Periodic.TimeZone; tz != nil && *tz != "" {
		l, err := time.LoadLocation(*tz)
		if err != nil {
			return time.Time{}, fmt.Errorf("periodic.time_zone: %w", err)
		}
		loc = l
	}
	var specs []string
	if s := j.Periodic.Spec; s != nil && *s != "" {
		specs = append(specs, *s)
	}
	specs = append(specs, j.Periodic.Specs...)
	var next time.Time
	for _, spec := range specs {
		t, err := cronNext(spec, from.In(loc))
		if err != nil {
			return time.Time{}, err
		}
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if next.IsZero() {
		return next, nil
	}
	return next.UTC(), nil
}

// cronNext is the spec's first time after from. The parser is third-party code: a panic
// becomes an error, never a crashed leader.
func cronNext(spec string, from time.Time) (t time.Time, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = time.Time{}, fmt.Errorf("cron expression %q: %v", spec, r)
		}
	}()
	expr, err := cronexpr.Parse(spec)
	if err != nil {
		return time.Time{}, fmt.Errorf("cron expression %q: %w", spec, err)
	}
	return expr.Next(from), nil
}

// PeriodicChild builds the child a periodic job launches at launch: a copy of the parent's
// spec under "<parent>/periodic-<unix seconds>", no longer periodic, pointing at its parent.
// The PeriodicForce RPC and the leader's dispatcher both use it, so a forced child and a
// scheduled one are the same thing.
func (j *Job) PeriodicChild(launch time.Time) *Job {
	child := j.childCopy()
	child.ID = fmt.Sprintf("%s%s%d", j.ID, PeriodicLaunchSuffix, launch.Unix())
	child.Name = child.ID
	child.Periodic = nil
	child.SubmitTime = launch.UnixNano()
	return child
}

// DispatchChild builds the child a dispatch of a parameterized job creates: the parent's spec
// under id with the payload and the parent's meta overlaid by the request's.
func (j *Job) DispatchChild(id string, submit time.Time, payload []byte, meta map[string]string, token string) *Job {
	child := j.childCopy()
	child.ID = id
	child.Name = id
	child.Dispatched = true
	child.DispatchIdempotencyToken = token
	child.Payload = payload
	if len(meta) > 0 {
		merged := make(map[string]string, len(j.Meta)+len(meta))
		maps.Copy(merged, j.Meta)
		maps.Copy(merged, meta)
		child.Meta = merged
	}
	child.SubmitTime = submit.UnixNano()
	return child
}

// childCopy is the parent with what a fresh job does not inherit cleared. Nested spec
// values are shared with the parent: children are written, never edited in place.
func (j *Job) childCopy() *Job {
	child := j.Copy()
	child.ParentID = j.ID
	child.Status, child.StatusDescription = "", ""
	child.Stop, child.Stable, child.VersionTag = false, false, nil
	child.Version, child.CreateIndex, child.ModifyIndex, child.JobModifyIndex = 0, 0, 0, 0
	// Dispatched and Payload stay: a periodic child of a dispatched job is a dispatched job
	// with its payload, not a parameterized template.
	child.DispatchIdempotencyToken = ""
	return child
}
