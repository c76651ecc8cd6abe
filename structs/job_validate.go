package structs

import (
	"fmt"
	"github.com/hashicorp/nomad/api"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/go-multierror"
)

var validJobTypes = []string{JobTypeService, JobTypeBatch, JobTypeSystem, JobTypeSysBatch}

// validNamespaceName bounds what may appear in a URL path segment and an ACL label.
var validNamespaceName = regexp.MustCompile(`^[a-zA-Z0-9-]{1,128}$`)

// Canonicalize fills the server-side defaults the client library does not set.
func (j *Job) Canonicalize() {
	if j.Namespace == "" {
		j.Namespace = DefaultNamespace
	}
	if j.Region == "" {
		j.Region = DefaultRegion
	}
	if j.Name == "" {
		j.Name = j.ID
	}
	if j.Type == "" {
		j.Type = JobTypeService
	}
	if j.Priority == 0 {
		j.Priority = JobDefaultPriority
	}
	if len(j.Datacenters) == 0 {
		j.Datacenters = []string{"*"}
	}
	if j.NodePool == "" {
		j.NodePool = DefaultNodePool
	}
}

// Validate checks a canonicalised job. Every message names the path to the bad field so the
// submitter can find it; all problems are reported at once.
func (j *Job) Validate() error {
	var errs *multierror.Error
	add := func(format string, args ...any) { errs = multierror.Append(errs, fmt.Errorf(format, args...)) }
	errs = multierror.Append(errs, validateJobLimits(j)) // structs/job_limits.go (nesting depth)

	switch {
	case j.ID == "":
		add("Missing job ID")
	case strings.ContainsAny(j.ID, " \t\n\x00"):
		add("Job ID %q contains whitespace or a null character", j.ID)
	case len(j.ID) > 128:
		add("Job ID must be at most 128 characters")
	}
	if j.Name == "" {
		add("Missing job name")
	}
	if j.Namespace != "" && !validNamespaceName.MatchString(j.Namespace) {
		add("Invalid job namespace %q", j.Namespace)
	}
	if !slices.Contains(validJobTypes, j.Type) {
		add("Invalid job type: %q", j.Type)
	}
	if j.Priority < JobMinPriority || j.Priority > JobMaxPriority {
		add("Job priority must be between [%d, %d]", JobMinPriority, JobMaxPriority)
	}
	for i, dc := range j.Datacenters {
		if dc == "" {
			add("datacenters[%d]: must not be empty", i)
		}
	}
	if len(j.TaskGroups) == 0 {
		add("Missing job task groups")
	}
	seenGroups := map[string]bool{}
	for i, tg := range j.TaskGroups {
		if tg == nil {
			add("group %d: must not be null", i)
			continue
		}
		name := stringValue(tg.Name)
		if name == "" {
			add("group %d: missing name", i)
			continue
		}
		if seenGroups[name] {
			add("group %q: defined more than once", name)
		}
		seenGroups[name] = true
		if tg.Count != nil && *tg.Count < 0 {
			add("group %q: count must not be negative", name)
		}
		if len(tg.Tasks) == 0 {
			add("group %q: missing tasks", name)
		}
		seenTasks := map[string]bool{}
		for k, task := range tg.Tasks {
			if task == nil {
				add("group %q: task %d: must not be null", name, k)
				continue
			}
			if task.Name == "" {
				add("group %q: task %d: missing name", name, k)
				continue
			}
			if seenTasks[task.Name] {
				add("group %q: task %q: defined more than once", name, task.Name)
			}
			seenTasks[task.Name] = true
			if task.Driver == "" {
				add("group %q: task %q: missing driver", name, task.Name)
			}
			if r := task.Resources; r != nil {
				if r.CPU != nil && *r.CPU < 0 {
					add("group %q: task %q: resources: cpu must not be negative", name, task.Name)
				}
				if r.MemoryMB != nil && *r.MemoryMB < 0 {
					add("group %q: task %q: resources: memory must not be negative", name, task.Name)
				}
			}
		}
	}
	if j.Type == JobTypeSystem || j.Type == JobTypeSysBatch {
		for _, tg := range j.TaskGroups {
			if tg != nil && tg.Count != nil && *tg.Count > 1 {
				add("group %q: %s jobs may not have a count greater than 1", stringValue(tg.Name), j.Type)
			}
		}
	}
	if j.Periodic != nil && j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
		add("periodic: only batch and sysbatch jobs may be periodic")
	}
	if j.ParameterizedJob != nil && j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
		add("parameterized: only batch and sysbatch jobs may be parameterized")
	}
	return errs.ErrorOrNil()
}

// ValidNamespaceName reports whether name may be used as a namespace.
func ValidNamespaceName(name string) bool { return validNamespaceName.MatchString(name) }

// Copy returns a copy that may have its top-level fields changed. The nested spec is shared:
// stored jobs are immutable, so code that changes a group copies that group first
// (see CopyTaskGroups).
func (j *Job) Copy() *Job {
	if j == nil {
		return nil
	}
	c := *j
	return &c
}

// CopyTaskGroups gives the job its own slice of shallow group copies, so a group's top-level
// fields (Count) can change without touching a stored version.
func (j *Job) CopyTaskGroups() {
	groups := make([]*api.TaskGroup, len(j.TaskGroups))
	for i, tg := range j.TaskGroups {
		c := *tg
		groups[i] = &c
	}
	j.TaskGroups = groups
}
