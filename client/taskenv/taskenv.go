package taskenv

import (
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// Port is one port of the task's group network: Value on the host, To inside the task's
// network namespace (0 for the same as Value).
type Port struct {
	Label  string
	Value  int
	To     int
	HostIP string
}

// Input is what a task's environment is built from.
type Input struct {
	Alloc  *structs.Allocation
	Group  *api.TaskGroup
	Task   *api.Task
	Node   *structs.Node
	Region string
	// AllocDir, TaskDir and SecretsDir are the shared alloc directory, the task's local
	// directory and its secrets directory as the task sees them (host paths for raw_exec,
	// /alloc, /local and /secrets inside a chroot or container).
	AllocDir, TaskDir, SecretsDir string
	Ports                         []Port
	// AllocIP is the allocation's own address in bridge mode ("" in host mode): its ports
	// are also named at it, as NOMAD_ALLOC_IP_<label> and NOMAD_ALLOC_ADDR_<label>.
	AllocIP string
}

// Env is a task's built environment.
type Env struct {
	// env is the task's environment: NOMAD_* and its env block, interpolated.
	env map[string]string
	// node holds the node's variables: node.unique.id, attr.<key>, meta.<key>, ...
	node map[string]string
}

// New builds the environment of in's task.
func New(in Input) *Env {
	e := &Env{env: map[string]string{}, node: nodeVars(in.Node, in.Region)}
	a := in.Alloc
	set := func(k, v string) { e.env[k] = v }
	if a != nil {
		set("NOMAD_ALLOC_ID", a.ID)
		if len(a.ID) >= 8 {
			set("NOMAD_SHORT_ALLOC_ID", a.ID[:8])
		}
		set("NOMAD_ALLOC_NAME", a.Name)
		set("NOMAD_ALLOC_INDEX", strconv.Itoa(a.Index()))
		set("NOMAD_GROUP_NAME", a.TaskGroup)
		set("NOMAD_NAMESPACE", a.Namespace)
		if j := a.Job; j != nil {
			set("NOMAD_JOB_ID", j.ID)
			set("NOMAD_JOB_NAME", j.Name)
			if j.ParentID != "" {
				set("NOMAD_JOB_PARENT_ID", j.ParentID)
			}
		}
	}
	set("NOMAD_REGION", in.Region)
	if n := in.Node; n != nil {
		set("NOMAD_DC", n.Datacenter)
		set("NOMAD_NODE_ID", n.ID)
		set("NOMAD_NODE_NAME", n.Name)
	}
	set("NOMAD_ALLOC_DIR", in.AllocDir)
	set("NOMAD_TASK_DIR", in.TaskDir)
	set("NOMAD_SECRETS_DIR", in.SecretsDir)
	if t := in.Task; t != nil {
		set("NOMAD_TASK_NAME", t.Name)
		if r := t.Resources; r != nil {
			if r.CPU != nil && *r.CPU > 0 {
				set("NOMAD_CPU_LIMIT", strconv.Itoa(*r.CPU))
			}
			if r.Cores != nil && *r.Cores > 0 {
				set("NOMAD_CPU_CORES", strconv.Itoa(*r.Cores))
			}
			if r.MemoryMB != nil && *r.MemoryMB > 0 {
				set("NOMAD_MEMORY_LIMIT", strconv.Itoa(*r.MemoryMB))
			}
			if r.MemoryMaxMB != nil && *r.MemoryMaxMB > 0 {
				set("NOMAD_MEMORY_MAX_LIMIT", strconv.Itoa(*r.MemoryMaxMB))
			}
		}
	}
	e.setPorts(in.Ports, in.AllocIP)
	// Meta: the job's, then the group's, then the task's, the later winning.
	var metas []map[string]string
	if a != nil && a.Job != nil {
		metas = append(metas, a.Job.Meta)
	}
	if in.Group != nil {
		metas = append(metas, in.Group.Meta)
	}
	if in.Task != nil {
		metas = append(metas, in.Task.Meta)
	}
	for _, meta := range metas {
		for k, v := range meta {
			set("NOMAD_META_"+k, v)
			set("NOMAD_META_"+cleanKey(k), v)
		}
	}
	// The env block last: it may override, and its values may use all of the above and
	// the node's variables (not each other: the order of a map is no order).
	if in.Task != nil {
		builtin := e.lookupFunc()
		for k, v := range in.Task.Env {
			e.env[k] = replace(v, builtin)
		}
	}
	return e
}

// setPorts sets the variables of each port, as upstream names them: NOMAD_PORT_<label> is
// the port the task listens on (To when mapped, else the host port), NOMAD_HOST_PORT_<label>
// the host port, NOMAD_IP_<label> and NOMAD_ADDR_<label> the host address.
func (e *Env) setPorts(ports []Port, allocIP string) {
	for _, p := range ports {
		if p.Label == "" {
			continue
		}
		label := cleanKey(p.Label)
		inside := p.Value
		if p.To > 0 {
			inside = p.To
		}
		if inside > 0 {
			e.env["NOMAD_PORT_"+label] = strconv.Itoa(inside)
			e.env["NOMAD_ALLOC_PORT_"+label] = strconv.Itoa(inside)
			if allocIP != "" {
				e.env["NOMAD_ALLOC_IP_"+label] = allocIP
				e.env["NOMAD_ALLOC_ADDR_"+label] = net.JoinHostPort(allocIP, strconv.Itoa(inside))
			}
		}
		if p.Value > 0 {
			e.env["NOMAD_HOST_PORT_"+label] = strconv.Itoa(p.Value)
		}
		ip := p.HostIP
		if ip == "" {
			ip = e.node["attr.unique.network.ip-address"]
		}
		if ip != "" {
			e.env["NOMAD_IP_"+label] = ip
			e.env["NOMAD_HOST_IP_"+label] = ip
			if p.Value > 0 {
				addr := net.JoinHostPort(ip, strconv.Itoa(p.Value))
				e.env["NOMAD_ADDR_"+label] = addr
				e.env["NOMAD_HOST_ADDR_"+label] = addr
			}
		}
	}
}

func nodeVars(n *structs.Node, region string) map[string]string {
	out := map[string]string{"node.region": region}
	if n == nil {
		return out
	}
	out["node.unique.id"] = n.ID
	out["node.unique.name"] = n.Name
	out["node.datacenter"] = n.Datacenter
	out["node.class"] = n.NodeClass
	out["node.pool"] = n.NodePool
	for k, v := range n.Attributes {
		out["attr."+k] = v
	}
	for k, v := range n.Meta {
		out["meta."+k] = v
	}
	return out
}

var badKeyChars = regexp.MustCompile(`[^A-Za-z0-9_]`)

// cleanKey makes k usable in a variable name: every character other than letters, digits
// and "_" becomes "_".
func cleanKey(k string) string { return badKeyChars.ReplaceAllString(k, "_") }

// Set adds a variable to the task's environment, one the servers gave the task (a workload
// identity) rather than one derived from the allocation.
func (e *Env) Set(key, value string) { e.env[key] = value }

// Map is the task's environment; the caller may change it.
func (e *Env) Map() map[string]string {
	out := make(map[string]string, len(e.env))
	for k, v := range e.env {
		out[k] = v
	}
	return out
}

// lookupFunc finds a variable: the task's environment first, then the node's.
func (e *Env) lookupFunc() func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := e.env[name]; ok {
			return v, true
		}
		v, ok := e.node[name]
		return v, ok
	}
}

// Replace interpolates the ${...} references in s.
func (e *Env) Replace(s string) string { return replace(s, e.lookupFunc()) }

// ReplaceAll returns v with every string in it interpolated, through maps and lists at any
// depth (map keys are left as they are). v itself is not changed.
func (e *Env) ReplaceAll(v any) any {
	lookup := e.lookupFunc()
	var walk func(any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case string:
			return replace(t, lookup)
		case []string:
			out := make([]string, len(t))
			for i, s := range t {
				out[i] = replace(s, lookup)
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, x := range t {
				out[i] = walk(x)
			}
			return out
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, x := range t {
				out[k] = walk(x)
			}
			return out
		case []map[string]any:
			out := make([]map[string]any, len(t))
			for i, m := range t {
				out[i] = walk(m).(map[string]any)
			}
			return out
		case map[string]string:
			out := make(map[string]string, len(t))
			for k, s := range t {
				out[k] = replace(s, lookup)
			}
			return out
		default:
			return v
		}
	}
	return walk(v)
}

// ReplaceConfig is ReplaceAll for a driver configuration.
func (e *Env) ReplaceConfig(cfg map[string]any) map[string]any {
	if cfg == nil {
		return nil
	}
	return e.ReplaceAll(cfg).(map[string]any)
}

// envIndexRe matches the body of ${env["X"]} (or with single quotes).
var envIndexRe = regexp.MustCompile(`^env\[\s*(?:"([^"]*)"|'([^']*)')\s*\]$`)

// replace interpolates the ${name} references in s whose name lookup knows; the others,
// and a "${" without its "}", stay as they are.
func replace(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		name := strings.TrimSpace(s[i+2 : i+2+j])
		if m := envIndexRe.FindStringSubmatch(name); m != nil {
			name = m[1] + m[2]
		}
		if v, ok := lookup(name); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+2+j+1])
		}
		s = s[i+2+j+1:]
	}
}
