package client

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// serviceAlloc is a service allocation of group g with a group service "web" on port label
// http (allocated port 25000) and task t with its own service "t-admin" on port 9090, plus a
// consul service the client must leave alone.
func serviceAlloc(id string, task *api.Task) *structs.Allocation {
	task.Services = []*api.Service{
		{Name: "t-admin", PortLabel: "9090", Provider: ServiceProviderNomad},
		{Name: "in-consul", PortLabel: "http", Provider: "consul"},
	}
	a := testAlloc(id, structs.JobTypeService, task)
	a.Job.TaskGroups[0].Services = []*api.Service{{Name: "web", PortLabel: "http", Tags: []string{"a", "b"}, Provider: ServiceProviderNomad}}
	a.AllocatedResources = &api.AllocatedResources{Shared: api.AllocatedSharedResources{
		Ports: []api.PortMapping{{Label: "http", Value: 25000, HostIP: "10.1.2.3"}},
	}}
	return a
}

func TestServiceAddress(t *testing.T) {
	node := &structs.Node{ID: "n", NodeResources: &structs.NodeResources{NodeResources: api.NodeResources{Networks: []*api.NetworkResource{{IP: "192.168.0.9"}}}}}
	alloc := serviceAlloc("a1", mockTask("t", nil))
	cases := []struct {
		name string
		svc  *api.Service
		addr string
		port int
	}{
		{name: "allocated port label", svc: &api.Service{PortLabel: "http"}, addr: "10.1.2.3", port: 25000},
		{name: "literal port", svc: &api.Service{PortLabel: "9090"}, addr: "192.168.0.9", port: 9090},
		{name: "no port", svc: &api.Service{}, addr: "192.168.0.9", port: 0},
		{name: "unknown label", svc: &api.Service{PortLabel: "grpc"}, addr: "192.168.0.9", port: 0},
		{name: "explicit address", svc: &api.Service{PortLabel: "http", Address: "svc.example"}, addr: "svc.example", port: 25000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, port := serviceAddress(node, alloc, tc.svc)
			must.Eq(t, tc.addr, addr)
			must.Eq(t, tc.port, port)
		})
	}
}

// The client registers a group's and a task's nomad services while the task runs, with
// upstream's IDs and the allocated port, and removes them when the allocation stops.
func TestClient_RegistersNomadServices(t *testing.T) {
	c, s := testClient(t)
	a1 := serviceAlloc("a1", mockTask("t", map[string]any{"run_for": "1h"}))
	s.setAllocs(a1)
	wantIDs := []string{"_nomad-task-a1-group-g-web-http", "_nomad-task-a1-t-t-admin-9090"}
	waitFor(t, "services registered", func() bool { return len(s.serviceIDs()) == 2 })
	must.Eq(t, wantIDs, s.serviceIDs())
	s.mu.Lock()
	web := s.services[wantIDs[0]]
	s.mu.Unlock()
	must.Eq(t, "web", web.ServiceName)
	must.Eq(t, "10.1.2.3", web.Address)
	must.Eq(t, 25000, web.Port)
	must.Eq(t, []string{"a", "b"}, web.Tags)
	must.Eq(t, c.NodeID(), web.NodeID)
	must.Eq(t, "a1", web.AllocID)
	must.Eq(t, "job", web.JobID)
	must.Eq(t, "default", web.Namespace)

	stopped := *a1
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped)
	waitFor(t, "services deregistered", func() bool { return len(s.serviceIDs()) == 0 })
}

// A task that ends takes its own services with it; the group's stay while another task runs.
func TestClient_TaskEndDeregistersItsServices(t *testing.T) {
	_, s := testClient(t)
	short := mockTask("t", map[string]any{"run_for": "100ms"})
	a := serviceAlloc("a1", short)
	a.Job.TaskGroups[0].Tasks = append(a.Job.TaskGroups[0].Tasks, mockTask("long", map[string]any{"run_for": "1h"}))
	a.Job.Type = structs.JobTypeBatch
	s.setAllocs(a)
	waitFor(t, "the short task's service to go", func() bool {
		ids := s.serviceIDs()
		return len(ids) == 1 && ids[0] == "_nomad-task-a1-group-g-web-http"
	})
}

// A restarted agent re-attaches to the task and sends its registrations again; the shutdown
// in between removed none (the task kept running).
func TestClient_ServicesResyncAfterRestart(t *testing.T) {
	r := newRestartable(t)
	alloc := serviceAlloc("a1", countingTask("600"))
	c1, s1 := r.start(alloc)
	waitFor(t, "services registered", func() bool { return len(s1.serviceIDs()) == 2 })
	pid := c1.TaskPID("a1", "t")
	must.Positive(t, pid)
	killGroup(t, pid)
	c1.Shutdown()
	must.Len(t, 2, s1.serviceIDs(), must.Sprint("a shutdown leaving tasks running keeps their services"))

	c2, s2 := r.start(alloc)
	waitFor(t, "re-attached", func() bool { return c2.TaskPID("a1", "t") == pid })
	waitFor(t, "services registered again", func() bool { return len(s2.serviceIDs()) == 2 })
	must.Eq(t, s1.serviceIDs(), s2.serviceIDs())
}
