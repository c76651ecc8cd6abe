package structs

import (
	"github.com/hashicorp/nomad/api"
)

// Job types.
const (
	JobTypeService  = "service"
	JobTypeBatch    = "batch"
	JobTypeSystem   = "system"
	JobTypeSysBatch = "sysbatch"
)

// Job statuses.
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// Job defaults filled by canonicalisation, matching upstream.
const (
	JobDefaultPriority = 50
	JobMinPriority     = 1
	JobMaxPriority     = 100
	DefaultNodePool    = "default"
)

// Job is the stored form of a job. Top-level fields are plain values because the server reads
// and sets them; the nested spec (groups, tasks, policies, networks …) reuses the official
// client's wire types, so every field a client sends survives a round trip unchanged.
type Job struct {
	Stop                     bool
	Region                   string
	Namespace                string
	ID                       string
	ParentID                 string
	Name                     string
	Type                     string
	Priority                 int
	AllAtOnce                bool
	Datacenters              []string
	NodePool                 string
	Constraints              []*api.Constraint
	Affinities               []*api.Affinity
	Spreads                  []*api.Spread
	TaskGroups               []*api.TaskGroup
	Update                   *api.UpdateStrategy
	Multiregion              *api.Multiregion
	Periodic                 *api.PeriodicConfig
	ParameterizedJob         *api.ParameterizedJobConfig
	Dispatched               bool
	DispatchIdempotencyToken string
	Payload                  []byte
	Meta                     map[string]string
	ConsulNamespace          string
	VaultNamespace           string
	NomadTokenID             string
	Status                   string
	StatusDescription        string
	Stable                   bool
	Version                  uint64
	SubmitTime               int64
	CreateIndex              uint64
	ModifyIndex              uint64
	JobModifyIndex           uint64
	UI                       *api.JobUIConfig
	VersionTag               *JobVersionTag
	// SubmittedBy is the token that registered this version's code, set by the leader
	// (never taken from a request): whom a workload identity of the version acts on behalf
	// of. A scale keeps it; a child of a periodic or parameterized job carries its parent's.
	// Our extension, omitted when unknown, so upstream's key list is unchanged without ACLs.
	SubmittedBy *OnBehalfOf `json:",omitempty"`
}

// JobVersionTag names a version so that it is kept by pruning and protects its job from GC.
type JobVersionTag struct {
	Name        string
	Description string
	TaggedTime  int64
}

// NamespacedID identifies a job across namespaces.
type NamespacedID struct {
	ID        string
	Namespace string
}

func (n NamespacedID) String() string { return n.Namespace + "/" + n.ID }

// NamespacedID returns the job's identity.
func (j *Job) NamespacedID() NamespacedID {
	return NamespacedID{ID: j.ID, Namespace: j.Namespace}
}

// IsPeriodic reports whether the job launches children on a schedule.
func (j *Job) IsPeriodic() bool { return j.Periodic != nil }

// IsParameterized reports whether the job is a dispatch template rather than a runnable job.
func (j *Job) IsParameterized() bool { return j.ParameterizedJob != nil && !j.Dispatched }

// LookupTaskGroup finds a group by name.
func (j *Job) LookupTaskGroup(name string) *api.TaskGroup {
	for _, tg := range j.TaskGroups {
		if tg.Name != nil && *tg.Name == name {
			return tg
		}
	}
	return nil
}

// JobFromAPI converts a job decoded from the wire into the stored form. The caller has already
// canonicalised it with the client library's rules; nested values are shared, not copied.
func JobFromAPI(in *api.Job) *Job {
	if in == nil {
		return nil
	}
	j := &Job{
		Stop:                     boolValue(in.Stop),
		Region:                   stringValue(in.Region),
		Namespace:                stringValue(in.Namespace),
		ID:                       stringValue(in.ID),
		ParentID:                 stringValue(in.ParentID),
		Name:                     stringValue(in.Name),
		Type:                     stringValue(in.Type),
		Priority:                 intValue(in.Priority),
		AllAtOnce:                boolValue(in.AllAtOnce),
		Datacenters:              in.Datacenters,
		NodePool:                 stringValue(in.NodePool),
		Constraints:              in.Constraints,
		Affinities:               in.Affinities,
		Spreads:                  in.Spreads,
		TaskGroups:               in.TaskGroups,
		Update:                   in.Update,
		Multiregion:              in.Multiregion,
		Periodic:                 in.Periodic,
		ParameterizedJob:         in.ParameterizedJob,
		Dispatched:               in.Dispatched,
		DispatchIdempotencyToken: stringValue(in.DispatchIdempotencyToken),
		Payload:                  in.Payload,
		Meta:                     in.Meta,
		ConsulNamespace:          stringValue(in.ConsulNamespace),
		VaultNamespace:           stringValue(in.VaultNamespace),
		UI:                       in.UI,
	}
	if in.VersionTag != nil {
		j.VersionTag = &JobVersionTag{Name: in.VersionTag.Name, Description: in.VersionTag.Description, TaggedTime: in.VersionTag.TaggedTime}
	}
	return j
}

func stringValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func intValue(i *int) int {
	if i == nil {
		return 0
	}
	return *i
}

func boolValue(b *bool) bool { return b != nil && *b }

// JobListStub is the list form of a job.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
	Meta              map[string]string `json:",omitempty"`
}

// Stub builds the list form; summary may be nil.
func (j *Job) Stub(summary *JobSummary, withMeta bool) *JobListStub {
	s := &JobListStub{
		ID:                j.ID,
		ParentID:          j.ParentID,
		Name:              j.Name,
		Namespace:         j.Namespace,
		Datacenters:       j.Datacenters,
		NodePool:          j.NodePool,
		Type:              j.Type,
		Priority:          j.Priority,
		Periodic:          j.IsPeriodic(),
		ParameterizedJob:  j.IsParameterized(),
		Stop:              j.Stop,
		Status:            j.Status,
		StatusDescription: j.StatusDescription,
		JobSummary:        summary,
		CreateIndex:       j.CreateIndex,
		ModifyIndex:       j.ModifyIndex,
		JobModifyIndex:    j.JobModifyIndex,
		SubmitTime:        j.SubmitTime,
	}
	if withMeta {
		s.Meta = j.Meta
	}
	return s
}

// JobSummary counts a job's allocations by group and client status.
type JobSummary struct {
	JobID       string
	Namespace   string
	Summary     map[string]TaskGroupSummary
	Children    *JobChildrenSummary
	CreateIndex uint64
	ModifyIndex uint64
}

// JobChildrenSummary counts the children of periodic and parameterized jobs.
type JobChildrenSummary struct {
	Pending int64
	Running int64
	Dead    int64
}

// JobCollectedAllocs tallies, by group and client status, the finished allocations of a job
// that the allocation GC removed while the job lives on. The summary is recounted from the
// allocations the state holds; the tally is added back, so the Complete, Failed and Lost
// counts keep what ran, as upstream's do. It is a row of its own, not a field of JobSummary:
// the summary keeps the shape the API serves, and the tally goes with the job when the job
// is purged or collected.
type JobCollectedAllocs struct {
	Namespace   string
	JobID       string
	Groups      map[string]CollectedAllocCounts
	CreateIndex uint64
	ModifyIndex uint64
}

// CollectedAllocCounts counts one group's collected allocations: only finished ones are
// ever collected.
type CollectedAllocCounts struct {
	Complete int
	Failed   int
	Lost     int
}

// TaskGroupSummary counts one group's allocations.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}
