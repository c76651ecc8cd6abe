package client

import (
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
)

// ServiceProviderNomad is the `provider` of services the client registers with the servers.
const ServiceProviderNomad = "nomad"

// serviceSyncer keeps the servers' registrations of this node's `provider = "nomad"` services
// equal to what its allocations want: each runner says which services it serves now (set),
// and one goroutine, owned by the client (its context and WaitGroup), sends the difference,
// retrying what failed after RetryInterval. The services' checks run beside them
// (service_checks.go); their results stay on the client and do not change a registration.
type serviceSyncer struct {
	c      *Client
	mu     sync.Mutex
	want   map[string]map[string]*structs.ServiceRegistration // alloc ID -> registration ID -> registration
	have   map[string]*structs.ServiceRegistration            // what the servers hold, as far as known
	notify chan struct{}
}

func newServiceSyncer(c *Client) *serviceSyncer {
	return &serviceSyncer{
		c: c, want: map[string]map[string]*structs.ServiceRegistration{}, have: map[string]*structs.ServiceRegistration{},
		notify: make(chan struct{}, 1),
	}
}

// set makes regs the registrations allocation allocID wants; none removes its registrations.
func (s *serviceSyncer) set(allocID string, regs []*structs.ServiceRegistration) {
	s.mu.Lock()
	if len(regs) == 0 {
		if _, ok := s.want[allocID]; !ok {
			s.mu.Unlock()
			return
		}
		s.want[allocID] = map[string]*structs.ServiceRegistration{}
	} else {
		m := make(map[string]*structs.ServiceRegistration, len(regs))
		for _, r := range regs {
			m[r.ID] = r
		}
		s.want[allocID] = m
	}
	s.mu.Unlock()
	s.wake()
}

// forget drops an allocation without deregistering anything: the servers removed its
// registrations with it (a purge).
func (s *serviceSyncer) forget(allocID string) {
	s.mu.Lock()
	delete(s.want, allocID)
	for id, r := range s.have {
		if r.AllocID == allocID {
			delete(s.have, id)
		}
	}
	s.mu.Unlock()
}

func (s *serviceSyncer) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *serviceSyncer) run() {
	defer s.c.wg.Done()
	for {
		select {
		case <-s.c.ctx.Done():
			return
		case <-s.notify:
		}
		// Gather the changes of one moment (the tasks of an allocation starting together).
		if !s.c.sleep(updateBatchDelay) {
			return
		}
		if !s.sync() {
			if !s.c.sleep(s.c.config.RetryInterval) {
				return
			}
			s.wake()
		}
	}
}

// sync sends what differs between want and have; it reports whether everything went through.
func (s *serviceSyncer) sync() bool {
	s.mu.Lock()
	var upserts []*structs.ServiceRegistration
	var deletes []string
	wanted := map[string]bool{}
	allocs := make([]string, 0, len(s.want))
	for a := range s.want {
		allocs = append(allocs, a)
	}
	sort.Strings(allocs)
	for _, a := range allocs {
		for id, r := range s.want[a] {
			wanted[id] = true
			if h := s.have[id]; h == nil || !sameService(h, r) {
				upserts = append(upserts, r)
			}
		}
		if len(s.want[a]) == 0 {
			delete(s.want, a)
		}
	}
	for id := range s.have {
		if !wanted[id] {
			deletes = append(deletes, id)
		}
	}
	s.mu.Unlock()
	sort.Slice(upserts, func(i, j int) bool { return upserts[i].ID < upserts[j].ID })
	sort.Strings(deletes)

	ok := true
	if len(upserts) > 0 {
		var reply structs.GenericResponse
		err := s.c.servers.UpsertServiceRegistrations(&structs.ServiceRegistrationUpsertRequest{
			NodeID: s.c.node.ID, Services: upserts, WriteRequest: s.c.writeRequest(),
		}, &reply)
		switch {
		case err == nil, isRefusal(err):
			// A refusal (the allocation ended or was removed meanwhile) will not change by
			// sending it again: the servers remove what the allocation had.
			if err != nil {
				s.c.logger.Debug("service registration refused", "error", err)
			}
			s.mu.Lock()
			for _, r := range upserts {
				s.have[r.ID] = r
			}
			s.mu.Unlock()
		default:
			s.c.logger.Warn("registering services failed", "error", err)
			ok = false
		}
	}
	for _, id := range deletes {
		var reply structs.GenericResponse
		err := s.c.servers.DeleteServiceRegistration(&structs.ServiceRegistrationDeleteByIDRequest{
			ID: id, NodeID: s.c.node.ID, WriteRequest: s.c.writeRequest(),
		}, &reply)
		if err != nil && !isRefusal(err) {
			s.c.logger.Warn("deregistering a service failed", "service_id", id, "error", err)
			ok = false
			continue
		}
		s.mu.Lock()
		delete(s.have, id)
		s.mu.Unlock()
	}
	return ok
}

// isRefusal reports an answer that sending again would not change: 400, 404, and 403, which
// the servers answer for an allocation no longer placed on this node (the GC removed it).
func isRefusal(err error) bool {
	code := structs.ErrorCode(err)
	return code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusForbidden
}

func sameService(a, b *structs.ServiceRegistration) bool {
	return a.ServiceName == b.ServiceName && a.AllocID == b.AllocID && a.Address == b.Address && a.Port == b.Port &&
		slices.Equal(a.Tags, b.Tags)
}

// serviceID is upstream's ID of a registration: owner is the task's name, or "group-<name>"
// for a group's service.
func serviceID(allocID, owner string, svc *api.Service) string {
	return "_nomad-task-" + allocID + "-" + owner + "-" + svc.Name + "-" + svc.PortLabel
}

// eachLiveNomadService calls fn for every nomad-provider service of alloc that should exist
// with the given task states: a group's while any of its tasks runs (owner "group-<name>",
// task ""), a task's while it runs (owner and task the task's name).
func eachLiveNomadService(alloc *structs.Allocation, states map[string]*structs.TaskState, fn func(owner, task string, svc *api.Service)) {
	if alloc.Job == nil {
		return
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return
	}
	running := func(task string) bool {
		ts := states[task]
		return ts != nil && ts.State == structs.TaskStateRunning
	}
	anyRunning := false
	for _, t := range tg.Tasks {
		anyRunning = anyRunning || running(t.Name)
	}
	live := func(owner, task string, svc *api.Service) {
		if svc != nil && svc.Provider == ServiceProviderNomad && svc.Name != "" {
			fn(owner, task, svc)
		}
	}
	if anyRunning && tg.Name != nil {
		for _, svc := range tg.Services {
			live("group-"+*tg.Name, "", svc)
		}
	}
	for _, t := range tg.Tasks {
		if running(t.Name) {
			for _, svc := range t.Services {
				live(t.Name, t.Name, svc)
			}
		}
	}
}

// allocServices builds the registrations of alloc's nomad services that should exist with the
// given task states.
func allocServices(node *structs.Node, alloc *structs.Allocation, states map[string]*structs.TaskState) []*structs.ServiceRegistration {
	var out []*structs.ServiceRegistration
	eachLiveNomadService(alloc, states, func(owner, _ string, svc *api.Service) {
		addr, port := serviceAddress(node, alloc, svc)
		out = append(out, &structs.ServiceRegistration{
			ID: serviceID(alloc.ID, owner, svc), ServiceName: svc.Name, Namespace: alloc.Namespace,
			NodeID: node.ID, Datacenter: node.Datacenter, JobID: alloc.JobID, AllocID: alloc.ID,
			Tags: slices.Clone(svc.Tags), Address: addr, Port: port,
		})
	})
	return out
}

// serviceAddress finds where a service listens: its port label among the allocation's ports
// (host networking: the host's address and the allocated port), a literal port number, or no
// port; an explicit address wins.
func serviceAddress(node *structs.Node, alloc *structs.Allocation, svc *api.Service) (string, int) {
	addr := ""
	if r := node.NodeResources; r != nil && len(r.Networks) > 0 && r.Networks[0] != nil {
		addr = r.Networks[0].IP
	}
	port := 0
	if ar := alloc.AllocatedResources; ar != nil {
		for _, p := range ar.Shared.Ports {
			if p.Label == svc.PortLabel {
				port = p.Value
				if p.HostIP != "" {
					addr = p.HostIP
				}
				break
			}
		}
	}
	if port == 0 {
		if n, err := strconv.Atoi(svc.PortLabel); err == nil && n > 0 && n <= 65535 {
			port = n
		}
	}
	if svc.Address != "" {
		addr = svc.Address
	}
	if addr == "" {
		addr = "127.0.0.1"
	}
	return addr, port
}
