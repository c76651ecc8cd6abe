package structs

import (
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/nomad/api"
)

// minCheckInterval and minCheckTimeout are upstream's floors: a check more frequent than
// once a second would cost the node more than it tells.
const (
	minCheckInterval = time.Second
	minCheckTimeout  = time.Second
)

// checkServiceChecks reports what is wrong with the checks of a nomad service, which the
// client runs. group lists the group's tasks for a group service (whose script checks name
// the task they run in), nil for a task's service. Checks of other providers are warned, not
// run, and not checked here.
func checkServiceChecks(svc *api.Service, group []*api.Task) []string {
	if svc == nil || svc.Provider != "nomad" {
		return nil
	}
	var out []string
	for i := range svc.Checks {
		chk := &svc.Checks[i]
		label := chk.Name
		if label == "" {
			label = fmt.Sprint(i + 1)
		}
		add := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("check %q: ", label)+fmt.Sprintf(format, args...))
		}
		hasTask := slices.ContainsFunc(group, func(t *api.Task) bool { return t != nil && t.Name == chk.TaskName })
		switch chk.Type {
		case "http":
			if chk.Path == "" {
				add("http checks need a path")
			}
			if chk.Protocol != "" && chk.Protocol != "http" && chk.Protocol != "https" {
				add(`protocol must be "http" or "https", got %q`, chk.Protocol)
			}
		case "tcp", "grpc":
		case "script":
			if chk.Command == "" {
				add("script checks need a command")
			}
			if group != nil && !hasTask {
				add("a group service's script check needs task, naming a task of the group to run in (got %q)", chk.TaskName)
			}
		case "":
			add("missing type (http, tcp or script)")
		default:
			add("type must be http, tcp, script or grpc, got %q", chk.Type)
		}
		if chk.Interval == 0 {
			add("missing interval")
		} else if chk.Interval < minCheckInterval {
			add("interval (%s) must be at least %s", chk.Interval, minCheckInterval)
		}
		if chk.Timeout == 0 {
			add("missing timeout")
		} else if chk.Timeout < minCheckTimeout {
			add("timeout (%s) must be at least %s", chk.Timeout, minCheckTimeout)
		}
		switch chk.OnUpdate {
		case "", "require_healthy", "ignore_warnings", "ignore":
		default:
			add(`on_update must be "require_healthy", "ignore_warnings" or "ignore", got %q`, chk.OnUpdate)
		}
		switch chk.InitialStatus {
		case "", "passing", "warning", "critical":
		default:
			add(`initial_status must be "passing", "warning" or "critical", got %q`, chk.InitialStatus)
		}
		for _, cr := range []*api.CheckRestart{chk.CheckRestart, svc.CheckRestart} {
			if cr == nil {
				continue
			}
			if cr.Limit < 0 {
				add("check_restart: limit must not be negative")
			}
			if cr.Grace != nil && *cr.Grace < 0 {
				add("check_restart: grace must not be negative")
			}
		}
	}
	return out
}
