package nomad

import (
	"slices"
	"strings"

	"github.com/nomadfork/nomad/structs"
)

// checkNamespaceCapabilities refuses a job that uses a task driver or group network mode its
// namespace's capabilities leave out. It is the namespace owner's control over what the
// namespace's submitters may run: a raw_exec task runs as the client agent's user, so a
// namespace that admits it admits anyone with submit-job to the agent's data_dir and every
// token stored there.
//
// It runs wherever a caller asks for a spec to be placed: register (and revert, scale and
// restore, which reach register), plan, validate, dispatch and periodic force. Children the leader creates itself (periodic
// launches) are not checked: their parent was checked when it was registered, and refusing a
// launch would fail a job with nobody to tell; an operator who tightens a namespace stops such
// parents, or re-registers them and sees the refusal.
func checkNamespaceCapabilities(ns *structs.Namespace, job *structs.Job) error {
	if ns == nil || ns.Capabilities == nil {
		return nil
	}
	c := ns.Capabilities
	var drivers []string
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			if !allowedByLists(t.Driver, c.EnabledTaskDrivers, c.DisabledTaskDrivers) && !slices.Contains(drivers, t.Driver) {
				drivers = append(drivers, t.Driver)
			}
		}
	}
	switch len(drivers) {
	case 0:
	case 1:
		return structs.BadRequest("used task driver %q is not allowed in namespace %q", drivers[0], ns.Name)
	default:
		return structs.BadRequest("used task drivers %q are not allowed in namespace %q", drivers, ns.Name)
	}
	for _, tg := range job.TaskGroups {
		for _, n := range tg.Networks {
			if n == nil {
				continue
			}
			mode := n.Mode
			if mode == "" {
				// A group network without a mode shares the host's network stack, so a
				// namespace that disables "host" must catch it too.
				mode = "host"
			}
			if !allowedByLists(mode, c.EnabledNetworkModes, c.DisabledNetworkModes) {
				return structs.BadRequest("used group network mode %q is not allowed in namespace %q", mode, ns.Name)
			}
		}
	}
	return nil
}

// allowedByLists applies an allow list (empty allows everything) and then a deny list, so a
// name on both lists is refused: the narrower setting wins.
func allowedByLists(name string, enabled, disabled []string) bool {
	if len(enabled) > 0 && !slices.ContainsFunc(enabled, func(e string) bool { return strings.EqualFold(e, name) }) {
		return false
	}
	return !slices.ContainsFunc(disabled, func(d string) bool { return strings.EqualFold(d, name) })
}

// checkDispatchNamespace applies the namespace's capabilities as they are now to a dispatch or
// a forced periodic launch: the caller asks for new work, so a driver the namespace has since
// disabled is refused even though the parent was accepted when it was registered.
func (j *Job) checkDispatchNamespace(parent *structs.Job) error {
	ns, err := j.srv.State().NamespaceByName(nil, parent.Namespace)
	if err != nil {
		return err
	}
	return checkNamespaceCapabilities(ns, parent)
}

// checkRegisterCapabilities is checkNamespaceCapabilities for the register path, except that a
// scale which adds no allocation to a job is let through: scaling a job the namespace no
// longer admits down (to 0, say) is how an operator winds it down, and it runs nothing new.
func checkRegisterCapabilities(ns *structs.Namespace, args *structs.JobRegisterRequest, existing *structs.Job) error {
	if args.Scaling != nil && existing != nil && !addsAllocations(existing, args.Job) {
		return nil
	}
	return checkNamespaceCapabilities(ns, args.Job)
}

// addsAllocations says whether any group of job asks for more than the same group of prev.
func addsAllocations(prev, job *structs.Job) bool {
	for _, tg := range job.TaskGroups {
		if tg.Name == nil || tg.Count == nil {
			return true
		}
		old := prev.LookupTaskGroup(*tg.Name)
		if old == nil || old.Count == nil || *tg.Count > *old.Count {
			return true
		}
	}
	return false
}
