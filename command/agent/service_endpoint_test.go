package agent

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad/nomadtest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestServices_DevAgent runs a job with a `provider = "nomad"` group service on a real agent
// (server and client, raw_exec): the client registers it with the port the scheduler gave
// the allocation, every read route shows it, and stopping the job removes it.
func TestServices_DevAgent(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	events := subscribe(t, c, map[api.Topic][]string{"Service": {"web-svc"}}, 0, "default")
	job := testJob("web")
	tg := job.TaskGroups[0]
	tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}}
	tg.Services = []*api.Service{{Name: "web-svc", PortLabel: "http", Provider: "nomad", Tags: []string{"edge", "v1"}}}
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "web", map[string]int{"running": 1})
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	must.NotNil(t, alloc.AllocatedResources)
	must.Len(t, 1, alloc.AllocatedResources.Shared.Ports)
	port := alloc.AllocatedResources.Shared.Ports[0]

	var regs []*api.ServiceRegistration
	eventually(t, 10*time.Second, "service web-svc to be registered", func() (bool, string) {
		regs, _, err = c.Services().Get("web-svc", nil)
		if err != nil {
			return false, err.Error()
		}
		return len(regs) == 1, fmt.Sprint(len(regs))
	})
	reg := regs[0]
	must.Eq(t, port.Value, reg.Port)
	must.Positive(t, reg.Port)
	must.NotEq(t, "", reg.Address)
	must.Eq(t, "_nomad-task-"+alloc.ID+"-group-web-web-svc-http", reg.ID)
	must.Eq(t, alloc.ID, reg.AllocID)
	must.Eq(t, "web", reg.JobID)
	must.Eq(t, alloc.NodeID, reg.NodeID)
	must.Eq(t, "dc1", reg.Datacenter)
	must.Eq(t, "default", reg.Namespace)
	must.Eq(t, []string{"edge", "v1"}, reg.Tags)

	list, meta, err := c.Services().List(nil)
	must.NoError(t, err)
	must.Eq(t, []*api.ServiceRegistrationListStub{{Namespace: "default",
		Services: []*api.ServiceRegistrationStub{{ServiceName: "web-svc", Tags: []string{"edge", "v1"}}}}}, list)
	byJob, _, err := c.Jobs().Services("web", nil)
	must.NoError(t, err)
	must.Eq(t, []*api.ServiceRegistration{reg}, byJob)
	byAlloc, _, err := c.Allocations().Services(alloc.ID, nil)
	must.NoError(t, err)
	must.Eq(t, []*api.ServiceRegistration{reg}, byAlloc)

	// A blocking list wakes when the stop removes the registration.
	done := make(chan []*api.ServiceRegistrationListStub, 1)
	go func() {
		out, _, err := c.Services().List(&api.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 20 * time.Second})
		if err != nil {
			out = nil
		}
		done <- out
	}()
	_, _, err = c.Jobs().Deregister("web", false, nil)
	must.NoError(t, err)
	select {
	case out := <-done:
		must.SliceEmpty(t, out)
	case <-time.After(25 * time.Second):
		t.Fatal("the blocking list never answered")
	}
	regs, _, err = c.Services().Get("web-svc", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, regs)

	// The stream, filtered by the service's name, saw it registered and then removed, with
	// upstream's types and a payload the official client decodes.
	seen := collectEvents(t, events, func(e api.Event) bool { return e.Type == "ServiceDeregistration" })
	var types []string
	for _, e := range seen {
		must.Eq(t, api.Topic("Service"), e.Topic)
		must.Eq(t, reg.ID, e.Key)
		must.Eq(t, []string{"web", "web-svc"}, e.FilterKeys)
		svc, err := e.Service()
		must.NoError(t, err)
		must.Eq(t, reg.Port, svc.Port)
		types = append(types, e.Type)
	}
	must.Eq(t, []string{"ServiceRegistration", "ServiceDeregistration"}, types)
}

// TestServices_HTTP: the official client reads and deletes registrations; bad input is a 400
// naming the parameter, unknown objects 404, a wrong method 405.
func TestServices_HTTP(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	srv := ta.Server()
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	stored, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	nomadtest.PlaceAllocs(t, srv, stored, &structs.Allocation{ID: "alloc-1", Name: "web.web[0]", TaskGroup: "web", NodeID: "node-1"})

	list, _, err := c.Services().List(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, list)
	must.NotNil(t, list)

	svcID := "_nomad-task-alloc-1-group-web-api-http"
	nomadtest.UpsertServiceRegistrations(t, srv, &structs.ServiceRegistration{ID: svcID, ServiceName: "api",
		Namespace: "default", NodeID: "node-1", JobID: "web", AllocID: "alloc-1", Address: "10.0.0.1", Port: 8080})
	regs, _, err := c.Services().Get("api", nil)
	must.NoError(t, err)
	must.Len(t, 1, regs)
	must.Eq(t, 8080, regs[0].Port)

	cases := []struct {
		name, method, path string
		code               int
		body               string
	}{
		{name: "choose not a number", method: "GET", path: "/v1/service/api?choose=x|k", code: 400, body: "choose"},
		{name: "choose without key", method: "GET", path: "/v1/service/api?choose=2", code: 400, body: "choose"},
		{name: "unknown registration", method: "DELETE", path: "/v1/service/api/nope", code: 404, body: "service registration not found"},
		{name: "registration of another name", method: "DELETE", path: "/v1/service/db/" + svcID, code: 404, body: "service registration not found"},
		{name: "unknown job", method: "GET", path: "/v1/job/nope/services", code: 404, body: "job not found"},
		{name: "unknown allocation", method: "GET", path: "/v1/allocation/nope/services", code: 404, body: "alloc not found"},
		{name: "list with POST", method: "POST", path: "/v1/services", code: 405},
		{name: "service with PUT", method: "PUT", path: "/v1/service/api", code: 405},
		{name: "unknown service", method: "GET", path: "/v1/service/none", code: 200, body: "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.State().LatestIndex()
			res := doHTTP(t, ta, tc.method, tc.path, nil, nil)
			must.Eq(t, tc.code, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.body)
			must.Eq(t, before, srv.State().LatestIndex())
		})
	}

	_, err = c.Services().Delete("api", svcID, nil)
	must.NoError(t, err)
	regs, _, err = c.Services().Get("api", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, regs)
	res := doHTTP(t, ta, "GET", "/v1/job/web/services", nil, nil)
	must.Eq(t, http.StatusOK, res.status)
	must.Eq(t, "[]", strings.TrimSpace(res.body))
}
