package structs

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/hashicorp/nomad/api"
)

// What this build does with every field of the official client's Job, TaskGroup and Task.
// A field is acted on, set only by the server, refused by validation with its name, or
// accepted and warned about: register, plan and validate answer a line in Warnings for each
// warned field a job sets, so a job file that relies on something we do not do is never
// accepted in silence. TestJobWarnings_EveryFieldHasARule fails when the official client
// gains a field that has no row here.

type fieldSupport int

const (
	// fieldActedOn: the servers or the client do what the field asks.
	fieldActedOn fieldSupport = iota
	// fieldServerSet: the server fills it (IDs, indexes, status); a client's value is
	// ignored or refused elsewhere.
	fieldServerSet
	// fieldRefused: validation refuses a job that sets it, naming the field.
	fieldRefused
	// fieldWarned: accepted, stored and shown, not acted on; a set value yields a warning.
	fieldWarned
)

type fieldRule struct {
	support fieldSupport
	// why completes the warning: what is not done, and what to do instead when there is
	// something.
	why string
	// when narrows a warned field to the values not acted on (nil: any non-zero value).
	when func(task *api.Task, v reflect.Value) bool
}

var (
	actedOn   = fieldRule{support: fieldActedOn}
	serverSet = fieldRule{support: fieldServerSet}
	refused   = fieldRule{support: fieldRefused}
)

func warned(why string) fieldRule { return fieldRule{support: fieldWarned, why: why} }

// jobFieldRules is keyed by the field names of api.Job.
var jobFieldRules = map[string]fieldRule{
	"Region": actedOn, "Namespace": actedOn, "ID": actedOn, "Name": actedOn, "Type": actedOn,
	"Priority": actedOn, "Datacenters": actedOn, "NodePool": actedOn, "Constraints": actedOn,
	"Affinities": actedOn, "TaskGroups": actedOn, "Update": actedOn, "Spreads": actedOn,
	"Periodic": actedOn, "ParameterizedJob": actedOn, "Reschedule": actedOn, "Migrate": actedOn,
	"Meta": actedOn, "UI": actedOn, "Stop": actedOn, "Payload": actedOn, "VersionTag": actedOn,
	"AllAtOnce":       warned("has no effect: placements are always made as they fit"),
	"Multiregion":     warned("multi-region deployments are not built: the job runs in its own region only"),
	"ConsulNamespace": warned("there is no Consul integration"),
	"VaultNamespace":  warned("there is no Vault integration"),
	"ParentID":        serverSet, "Dispatched": serverSet, "DispatchIdempotencyToken": serverSet,
	"NomadTokenID": serverSet, "Status": serverSet, "StatusDescription": serverSet, "Stable": serverSet,
	"Version": serverSet, "SubmitTime": serverSet, "CreateIndex": serverSet, "ModifyIndex": serverSet,
	"JobModifyIndex": serverSet,
}

// groupFieldRules is keyed by the field names of api.TaskGroup.
var groupFieldRules = map[string]fieldRule{
	"Name": actedOn, "Count": actedOn, "Constraints": actedOn, "Affinities": actedOn, "Tasks": actedOn,
	"Spreads": actedOn, "RestartPolicy": actedOn, "Disconnect": actedOn, "ReschedulePolicy": actedOn,
	"Update": actedOn, "Migrate": actedOn, "Meta": actedOn, "Services": actedOn,
	"MaxClientDisconnect": actedOn, "Scaling": actedOn,
	// Host and bridge modes are built (bridge through CNI, client/allocnet); what else a
	// network block may ask is warned.
	"Networks": {support: fieldWarned,
		why: `only modes "host" and "bridge" are built (not "none" or "cni/<name>"); hostname, cni args, and dns outside bridge mode are not acted on`,
		when: func(_ *api.Task, v reflect.Value) bool {
			nets, _ := v.Interface().([]*api.NetworkResource)
			for _, n := range nets {
				if n != nil && NetworkBlockNotActedOn(n) {
					return true
				}
			}
			return false
		}},
	// Host volumes are placed on and mounted; a CSI request fits no node, which is why it
	// alone is warned.
	"Volumes": {support: fieldWarned, why: "CSI volumes are not supported: a group asking for one fits no node",
		when: func(_ *api.Task, v reflect.Value) bool {
			for _, k := range v.MapKeys() {
				if r, ok := v.MapIndex(k).Interface().(*api.VolumeRequest); ok && r != nil && r.Type != "" && r.Type != "host" {
					return true
				}
			}
			return false
		}},
	"EphemeralDisk":             actedOn,
	"ShutdownDelay":             actedOn,
	"MaxRunDuration":            warned("is not enforced"),
	"StopAfterClientDisconnect": warned("is not acted on: the client does not stop its tasks on its own when cut off"),
	"Consul":                    warned("there is no Consul integration"),
	"PreventRescheduleOnLost":   warned("is not acted on: a lost allocation is replaced"),
}

// taskFieldRules is keyed by the field names of api.Task.
var taskFieldRules = map[string]fieldRule{
	"Name": actedOn, "Driver": actedOn, "Config": actedOn, "Constraints": actedOn, "Affinities": actedOn,
	"Env": actedOn, "Services": actedOn, "Resources": actedOn, "RestartPolicy": actedOn, "Meta": actedOn,
	"KillTimeout": actedOn,
	"LogConfig":   actedOn, "DispatchPayload": actedOn, "ScalingPolicies": actedOn,
	"Identity": actedOn, "Identities": actedOn,
	"User":            actedOn,
	"KillSignal":      actedOn,
	"Vault":           refused,
	"Kind":            refused, // Connect proxies and gateways: refused with their services
	"Lifecycle":       actedOn,
	"Leader":          actedOn,
	"ShutdownDelay":   actedOn,
	"Artifacts":       actedOn,
	"Templates":       actedOn,
	"Consul":          warned("there is no Consul integration"),
	"CSIPluginConfig": warned("CSI plugins are not supported"),
	"Secrets":         warned("secret blocks are not fetched"),
	"Actions":         warned("actions are stored but cannot be run"),
	"Schedule":        warned("task schedules are not enforced"),

	// Mounts are bound private and unlabelled: only other propagation modes and SELinux
	// labels are not acted on.
	"VolumeMounts": {support: fieldWarned, why: "propagation_mode other than private and selinux_label are not acted on: mounts are private and unlabelled",
		when: func(task *api.Task, _ reflect.Value) bool {
			for _, m := range task.VolumeMounts {
				if m != nil && ((m.PropagationMode != nil && *m.PropagationMode != "" && *m.PropagationMode != api.VolumeMountPropagationPrivate) ||
					(m.SELinuxLabel != nil && *m.SELinuxLabel != "")) {
					return true
				}
			}
			return false
		}},
}

// resourcesFieldRules is keyed by the field names of api.Resources, a task's resources
// block: the scheduler and the drivers act on the sizes, ports and devices; the rest is
// warned so that a job relying on it is not accepted in silence.
var resourcesFieldRules = map[string]fieldRule{
	"CPU": actedOn, "Cores": actedOn, "MemoryMB": actedOn, "MemoryMaxMB": actedOn,
	"Networks": actedOn, "Devices": actedOn,
	// The client library fills affinity "none", which asks nothing.
	"NUMA": {support: fieldWarned, why: "NUMA-aware placement is not built: cores and devices are not aligned to a NUMA node",
		when: func(_ *api.Task, v reflect.Value) bool {
			n, _ := v.Interface().(*api.NUMAResource)
			return n != nil && ((n.Affinity != "" && n.Affinity != "none") || len(n.Devices) > 0)
		}},
	// Jobs exported from upstream carry these sizes as 0 (and secrets as its default, 1):
	// only a size that asks for something is warned.
	"SecretsMB": {support: fieldWarned, why: "is not acted on: the secrets directory is a plain directory, not a size-limited tmpfs",
		when: intAbove(1)},
	"DiskMB": {support: fieldWarned, why: "is not acted on: a task's disk is the group's ephemeral_disk size", when: intAbove(0)},
	"IOPS":   {support: fieldWarned, why: "is not acted on", when: intAbove(0)},
}

// intAbove narrows a warned *int field to values above floor.
func intAbove(floor int) func(*api.Task, reflect.Value) bool {
	return func(_ *api.Task, v reflect.Value) bool {
		n, _ := v.Interface().(*int)
		return n != nil && *n > floor
	}
}

// Warnings lists, one line each, the fields the job sets that this build accepts but does
// not act on. The lines name the group and task as validation errors do.
func (j *Job) Warnings() []string {
	var out []string
	jobValue := reflect.ValueOf(j).Elem()
	// The stored job has plain values where the client's has pointers: its fields are
	// looked up by the client's names, in the client's order, so that a row turned to
	// warned here warns without another list to keep.
	apiJob := reflect.TypeFor[api.Job]()
	for i := 0; i < apiJob.NumField(); i++ {
		name := apiJob.Field(i).Name
		if jobFieldRules[name].support != fieldWarned {
			continue
		}
		if f := jobValue.FieldByName(name); f.IsValid() && !f.IsZero() {
			out = append(out, fmt.Sprintf("%s: %s", hclName(apiJob, name), jobFieldRules[name].why))
		}
	}
	for _, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		prefix := fmt.Sprintf("group %q: ", stringValue(tg.Name))
		out = append(out, warnedFields(prefix, reflect.ValueOf(tg).Elem(), groupFieldRules, nil)...)
		out = append(out, serviceWarnings(prefix, tg.Services, true)...)
		for _, task := range tg.Tasks {
			if task == nil {
				continue
			}
			taskPrefix := fmt.Sprintf("%stask %q: ", prefix, task.Name)
			out = append(out, warnedFields(taskPrefix, reflect.ValueOf(task).Elem(), taskFieldRules, task)...)
			if task.Resources != nil {
				out = append(out, warnedFields(taskPrefix+"resources: ", reflect.ValueOf(task.Resources).Elem(), resourcesFieldRules, task)...)
			}
			out = append(out, serviceWarnings(taskPrefix, task.Services, false)...)
		}
	}
	return out
}

// serviceWarnings covers what a service asks that is not done: registration in Consul (the
// default provider, as upstream) and the parts of checks the client does not run.
func serviceWarnings(prefix string, services []*api.Service, group bool) []string {
	var out []string
	for _, svc := range services {
		if svc == nil || svc.Connect != nil { // Connect is refused by validation
			continue
		}
		if svc.Provider != "nomad" {
			out = append(out, fmt.Sprintf("%sservice %q: provider %q: there is no Consul integration, so it is registered nowhere; set provider = \"nomad\"",
				prefix, svc.Name, cmpOr(svc.Provider, "consul")))
		}
		if svc.Provider != "nomad" {
			continue // the provider's warning covers its checks: nothing runs them
		}
		for _, chk := range svc.Checks {
			p := fmt.Sprintf("%sservice %q: check %q: ", prefix, svc.Name, chk.Name)
			out = append(out, checkWarnings(p, &chk)...)
			cr := chk.CheckRestart
			if cr == nil {
				cr = svc.CheckRestart
			}
			if group && chk.TaskName == "" && cr != nil && cr.Limit > 0 {
				out = append(out, p+"check_restart: not acted on: a group service's check restarts the task its task field names, and it names none")
			}
		}
	}
	return out
}

// checkWarnings covers what a nomad service's check asks that the client does not do: it runs
// http, tcp and script checks with their interval, timeout, initial status, on_update and
// check_restart, and nothing else.
func checkWarnings(prefix string, chk *api.ServiceCheck) []string {
	var out []string
	switch chk.Type {
	case "http", "tcp", "script":
	default:
		out = append(out, fmt.Sprintf("%stype %q: not run; the client runs http, tcp and script checks", prefix, chk.Type))
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"expose", chk.Expose},
		{"advertise", chk.Advertise != ""},
		{"address_mode", chk.AddressMode != "" && chk.AddressMode != "host" && chk.AddressMode != "auto"},
		{"grpc_service", chk.GRPCService != ""},
		{"grpc_use_tls", chk.GRPCUseTLS},
		{"success_before_passing", chk.SuccessBeforePassing != 0},
		{"failures_before_critical", chk.FailuresBeforeCritical != 0},
		{"failures_before_warning", chk.FailuresBeforeWarning != 0},
	} {
		if f.set {
			out = append(out, prefix+f.name+": not acted on; every result counts as it comes")
		}
	}
	return out
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func warnedFields(prefix string, v reflect.Value, rules map[string]fieldRule, task *api.Task) []string {
	var out []string
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		rule, ok := rules[t.Field(i).Name]
		if !ok || rule.support != fieldWarned {
			continue
		}
		f := v.Field(i)
		set := !f.IsZero()
		if set && rule.when != nil {
			set = rule.when(task, f)
		}
		if set {
			out = append(out, prefix+hclName(t, t.Field(i).Name)+": "+rule.why)
		}
	}
	return out
}

// hclName is the name a job file writes for the field: its hcl tag, else its Go name in
// snake case (ConsulNamespace → consul_namespace).
func hclName(t reflect.Type, field string) string {
	if sf, ok := t.FieldByName(field); ok {
		if tag, ok := sf.Tag.Lookup("hcl"); ok {
			if name, _, _ := strings.Cut(tag, ","); name != "" {
				return name
			}
		}
	}
	var b strings.Builder
	for i, r := range field {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// NetworkBlockNotActedOn says whether a group network asks for something this build does not
// do: a mode other than host and bridge, a hostname, CNI args, or dns outside bridge mode.
func NetworkBlockNotActedOn(n *api.NetworkResource) bool {
	switch n.Mode {
	case "", "host", "bridge":
	default:
		return true
	}
	return n.Hostname != "" || n.CNI != nil || (n.DNS != nil && n.Mode != "bridge")
}
