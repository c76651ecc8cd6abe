package structs

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/hashicorp/cronexpr"
	"github.com/hashicorp/go-multierror"
	"github.com/hashicorp/nomad/api"
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
	case strings.Contains(j.ID, " "):
		// Only the space, as upstream: a newline or a tab is allowed (checkName).
		add("Job ID %s contains a space", quoteName(j.ID))
	default:
		if msg := checkName(j.ID, true); msg != "" {
			add("Job ID %s: %s", quoteName(j.ID), msg)
		}
	}
	if j.Name == "" {
		add("Missing job name")
	} else if msg := checkName(j.Name, true); msg != "" {
		add("Job name %s: %s", quoteName(j.Name), msg)
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
		if msg := checkName(name, false); msg != "" {
			add("group %s: name %s", quoteName(name), msg)
		}
		if seenGroups[name] {
			add("group %q: defined more than once", name)
		}
		seenGroups[name] = true
		if tg.Count != nil && *tg.Count < 0 {
			add("group %q: count must not be negative", name)
		}
		for _, msg := range scalingProblems(tg) {
			add("group %q: scaling: %s", name, msg)
		}
		connect := connectServices(tg)
		for _, svc := range connect {
			add("group %q: service %q: connect: Consul Connect (sidecars, gateways, native) is not supported by this cluster", name, svc)
		}
		if len(tg.Tasks) == 0 && len(connect) == 0 {
			add("group %q: missing tasks", name)
		}
		for _, svc := range tg.Services {
			for _, msg := range checkServiceChecks(svc, tg.Tasks) {
				add("group %q: service %q: %s", name, svc.Name, msg)
			}
		}
		for _, msg := range checkMigrate(tg.Migrate) {
			add("group %q: migrate: %s", name, msg)
		}
		for _, msg := range checkDisconnect(tg) {
			add("group %q: %s", name, msg)
		}
		for _, msg := range checkGroupVolumes(tg) {
			add("group %q: %s", name, msg)
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
			if msg := checkName(task.Name, false); msg != "" {
				add("group %s: task %s: name %s", quoteName(name), quoteName(task.Name), msg)
			}
			if seenTasks[task.Name] {
				add("group %q: task %q: defined more than once", name, task.Name)
			}
			seenTasks[task.Name] = true
			if task.Driver == "" {
				add("group %q: task %q: missing driver", name, task.Name)
			}
			if task.Vault != nil {
				// Carried from the job file so the refusal names it, rather than a task
				// that starts without the secrets it expects.
				add("group %q: task %q: vault: this cluster has no Vault integration; remove the vault block", name, task.Name)
			}
			if task.Kind != "" {
				// Every kind names a Consul Connect role (connect-proxy:, connect-native:,
				// the gateways): a task that declares one would run without its mesh.
				add("group %q: task %q: kind: Consul Connect (sidecars, gateways, native) is not supported by this cluster; remove kind %q", name, task.Name, task.Kind)
			}
			if r := task.Resources; r != nil {
				if r.CPU != nil && *r.CPU < 0 {
					add("group %q: task %q: resources: cpu must not be negative", name, task.Name)
				}
				if r.MemoryMB != nil && *r.MemoryMB < 0 {
					add("group %q: task %q: resources: memory must not be negative", name, task.Name)
				}
			}
			for _, svc := range task.Services {
				for _, msg := range checkServiceChecks(svc, nil) {
					add("group %q: task %q: service %q: %s", name, task.Name, svc.Name, msg)
				}
			}
			for i, a := range task.Artifacts {
				for _, msg := range checkArtifact(a) {
					add("group %q: task %q: artifact %d: %s", name, task.Name, i+1, msg)
				}
			}
			for i, vm := range task.VolumeMounts {
				for _, msg := range checkVolumeMount(tg, vm) {
					add("group %q: task %q: volume_mount %d: %s", name, task.Name, i+1, msg)
				}
			}
			if dp := task.DispatchPayload; dp != nil && dp.File != "" {
				if msg := checkDispatchPayloadFile(dp.File); msg != "" {
					add("group %q: task %q: dispatch_payload.file %s", name, task.Name, msg)
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
	for _, msg := range checkUpdate(j) {
		add("%s", msg)
	}
	for _, msg := range checkReschedule(j) {
		add("%s", msg)
	}
	for _, msg := range checkPlacement(j) {
		add("%s", msg)
	}
	if j.Periodic != nil && j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
		add("periodic: only batch and sysbatch jobs may be periodic")
	}
	if j.Periodic != nil {
		for _, msg := range checkPeriodic(j.Periodic) {
			add("%s", msg)
		}
	}
	if j.ParameterizedJob != nil && j.Type != JobTypeBatch && j.Type != JobTypeSysBatch {
		add("parameterized: only batch and sysbatch jobs may be parameterized")
	}
	return errs.ErrorOrNil()
}

// checkArtifact reports what is wrong with an artifact block before a client tries it. The
// destination may reach the shared alloc directory ("../alloc/...") as upstream allows, but
// not leave the allocation; what ${...} gives is checked again on the client.
func checkArtifact(a *api.TaskArtifact) []string {
	if a == nil {
		return []string{"must not be null"}
	}
	var msgs []string
	if a.GetterSource == nil || strings.TrimSpace(*a.GetterSource) == "" {
		msgs = append(msgs, "source is required")
	}
	if m := a.GetterMode; m != nil && *m != "" && *m != "any" && *m != "file" && *m != "dir" {
		msgs = append(msgs, fmt.Sprintf("mode %q must be any, file or dir", *m))
	}
	if d := a.RelativeDest; d != nil && *d != "" {
		clean := path.Clean(path.Join("task", *d))
		if path.IsAbs(*d) || clean == ".." || strings.HasPrefix(clean, "../") {
			msgs = append(msgs, fmt.Sprintf("destination %q escapes the allocation directory", *d))
		}
	}
	return msgs
}

// checkMigrate reports what is wrong with a group's migrate block, which the drainer follows.
// Unset fields take upstream's defaults (api.DefaultMigrateStrategy).
func checkMigrate(m *api.MigrateStrategy) []string {
	if m == nil {
		return nil
	}
	var out []string
	if m.MaxParallel != nil && *m.MaxParallel < 0 {
		out = append(out, "max_parallel must not be negative")
	}
	if m.HealthCheck != nil && *m.HealthCheck != "checks" && *m.HealthCheck != "task_states" {
		out = append(out, fmt.Sprintf("health_check must be \"checks\" or \"task_states\", got %q", *m.HealthCheck))
	}
	def := api.DefaultMigrateStrategy()
	minHealthy, deadline := *def.MinHealthyTime, *def.HealthyDeadline
	if m.MinHealthyTime != nil {
		minHealthy = *m.MinHealthyTime
	}
	if m.HealthyDeadline != nil {
		deadline = *m.HealthyDeadline
	}
	switch {
	case minHealthy < 0:
		out = append(out, "min_healthy_time must not be negative")
	case deadline <= 0:
		out = append(out, "healthy_deadline must be positive")
	case minHealthy >= deadline:
		out = append(out, fmt.Sprintf("min_healthy_time (%s) must be less than healthy_deadline (%s)", minHealthy, deadline))
	}
	return out
}

// maxDispatchPayloadPath bounds the dispatch_payload file path.
const maxDispatchPayloadPath = 512

// checkDispatchPayloadFile reports why path cannot name the payload file under the task's
// local directory: the client writes the payload there, so the path must stay inside it.
func checkDispatchPayloadFile(path string) string {
	switch {
	case len(path) > maxDispatchPayloadPath:
		return fmt.Sprintf("must be at most %d characters, got %d", maxDispatchPayloadPath, len(path))
	case strings.HasPrefix(path, "/"):
		return fmt.Sprintf("%q must be relative to the task's local directory", path)
	case strings.ContainsFunc(path, unicode.IsControl):
		return "must not contain control characters"
	}
	for _, elem := range strings.Split(path, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return fmt.Sprintf("%q must not contain empty, \".\" or \"..\" elements", path)
		}
	}
	return ""
}

// maxCronLength bounds one cron expression of a periodic job.
const maxCronLength = 256

// checkPeriodic reports what is wrong with a periodic block. As upstream, a disabled block is
// not checked. Every spec must parse as a cron expression: one that does not would never
// launch, and fail only when the leader next computes a launch time.
func checkPeriodic(p *api.PeriodicConfig) []string {
	if p.Enabled != nil && !*p.Enabled {
		return nil
	}
	var msgs []string
	if p.SpecType != nil && *p.SpecType != "" && *p.SpecType != api.PeriodicSpecCron {
		msgs = append(msgs, fmt.Sprintf("periodic: unknown spec type %q: only %q is supported", *p.SpecType, api.PeriodicSpecCron))
	}
	specs := slices.Clone(p.Specs)
	field := "periodic.crons"
	if p.Spec != nil && *p.Spec != "" {
		specs = append([]string{*p.Spec}, specs...)
		if len(p.Specs) == 0 {
			field = "periodic.cron"
		}
	}
	if len(specs) == 0 {
		msgs = append(msgs, "periodic: a cron expression (cron or crons) is required")
	}
	for _, spec := range specs {
		if len(spec) > maxCronLength {
			msgs = append(msgs, fmt.Sprintf("%s: cron expression must be at most %d characters, got %d", field, maxCronLength, len(spec)))
			continue
		}
		if err := parseCron(spec); err != nil {
			msgs = append(msgs, fmt.Sprintf("%s: invalid cron expression %q: %v", field, spec, err))
		}
	}
	if p.TimeZone != nil && *p.TimeZone != "" {
		if _, err := time.LoadLocation(*p.TimeZone); err != nil {
			msgs = append(msgs, fmt.Sprintf("periodic.time_zone: invalid time zone %s", quoteName(*p.TimeZone)))
		}
	}
	return msgs
}

// parseCron parses spec as the leader will. The parser is third-party code fed with user
// input: should it panic, the spec is refused and the server stays up.
func parseCron(spec string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unparseable: %v", r)
		}
	}()
	_, err = cronexpr.Parse(spec)
	return err
}

// CheckMaxCount refuses a job whose group counts add up to more than max (the server's
// job_max_count): every allocation costs the scheduler, the state store and the clients, and
// a count is otherwise only bounded by its integer type. A group without a count runs one.
func (j *Job) CheckMaxCount(max int) error {
	total := 0
	for _, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		count := 1
		if tg.Count != nil {
			count = *tg.Count
		}
		if count <= 0 {
			continue
		}
		// Compared before adding, so no sum can overflow.
		if count > max-total {
			return BadRequest("group %s: count %d brings the sum of the job's group counts above job_max_count (%d)",
				quoteName(stringValue(tg.Name)), count, max)
		}
		total += count
	}
	return nil
}

// MaxNameLength bounds job IDs, job names, group names and task names.
const MaxNameLength = 128

// checkName says what is wrong with a job ID or a job, group or task name, or "" when nothing
// is. Clients make directories and files named after tasks, as root: a task or group name
// must be one plain path element ("/", "." and ".." would lead out of the allocation
// directory), and control characters (NUL among them) have no place in a name or a path.
// Job IDs and names (jobLevel) may hold "/" as upstream allows (its periodic and dispatched
// children are "parent/periodic-…"): no client path is built from them, and they travel
// escaped in URLs. They may also hold a newline or a tab, as upstream allows and the official
// client's tests use (every consumer that prints IDs one per line quotes them: the purge
// alert feed of `nomad event stream -purged`, hclog); every other control character (ESC,
// CR …, which could rewrite a terminal showing the ID) is still refused.
func checkName(name string, jobLevel bool) string {
	control := unicode.IsControl
	if jobLevel {
		control = func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }
	}
	switch {
	case len(name) > MaxNameLength:
		return fmt.Sprintf("must be at most %d characters, got %d", MaxNameLength, len(name))
	case !jobLevel && strings.Contains(name, "/"):
		return `must not contain "/"`
	case name == "." || name == "..":
		return `must not be "." or ".."`
	case strings.ContainsRune(name, 0):
		return "must not contain a null character"
	case strings.ContainsFunc(name, control):
		return "must not contain control characters"
	}
	return ""
}

// quoteName quotes a name for an error message, cut short when it is over the limit so that
// the message does not echo the whole of an oversized input.
func quoteName(name string) string {
	if len(name) <= MaxNameLength {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q...", name[:64])
}

// ValidNamespaceName reports whether name may be used as a namespace.
func ValidNamespaceName(name string) bool { return validNamespaceName.MatchString(name) }

// Copy returns a copy that may have its top-level fields changed. The nested spec is shared:
// stored jobs are immutable, so code that changes a group copies that group first
// (see CopyTaskGroups).
func (j *Job) Copy() *Job {
	return copyWith(j, nil)
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

// connectServices names the group's and its tasks' services with a connect block. They are
// refused by name: a gateway group has no task of its own, and "missing tasks" would hide
// that the feature itself is what is missing.
func connectServices(tg *api.TaskGroup) []string {
	var out []string
	for _, svc := range tg.Services {
		if svc != nil && svc.Connect != nil {
			out = append(out, svc.Name)
		}
	}
	for _, task := range tg.Tasks {
		if task == nil {
			continue
		}
		for _, svc := range task.Services {
			if svc != nil && svc.Connect != nil {
				out = append(out, svc.Name)
			}
		}
	}
	return out
}
