package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// Routes of `provider = "nomad"` service registrations. The job and allocation subresources
// are registered here, next to the rest of the service API, as their own patterns: the mux
// picks the most specific one, so they neither shadow nor are shadowed by /v1/job/{id} and
// /v1/allocation/{id} (routes_test.go checks).
func (s *HTTPServer) registerServiceRoutes(mux *http.ServeMux) {
	s.handle(mux, "/v1/services", methods{"GET": s.serviceList})
	s.handle(mux, "/v1/service/{name}", methods{"GET": s.serviceRead})
	s.handle(mux, "/v1/service/{name}/{id}", methods{"DELETE": s.serviceDelete})
	s.handle(mux, "/v1/job/{id}/services", methods{"GET": s.jobServices})
	s.handle(mux, "/v1/allocation/{id}/services", methods{"GET": s.allocServices})
}

func (s *HTTPServer) serviceList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ServiceRegistrationListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "ServiceRegistration.List", &args, func(reply *structs.ServiceRegistrationListResponse) (any, error) {
		return nonNil(reply.Services), nil
	})
}

// serviceRead lists the instances of one service; ?choose=N|key picks N of them by
// rendezvous hashing on key, as upstream.
func (s *HTTPServer) serviceRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ServiceRegistrationByNameRequest{
		ServiceName: r.PathValue("name"), Choose: r.URL.Query().Get("choose"), QueryOptions: queryOptions(r),
	}
	return read(s, w, "ServiceRegistration.GetService", &args, func(reply *structs.ServiceRegistrationsResponse) (any, error) {
		return nonNil(reply.Services), nil
	})
}

func (s *HTTPServer) serviceDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ServiceRegistrationDeleteByIDRequest{
		ID: r.PathValue("id"), ServiceName: r.PathValue("name"), WriteRequest: writeRequest(r),
	}
	return s.writeForIndex(w, "ServiceRegistration.DeleteByID", &args)
}

func (s *HTTPServer) jobServices(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.JobSpecificRequest{JobID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "ServiceRegistration.ListByJob", &args, func(reply *structs.ServiceRegistrationsResponse) (any, error) {
		if reply.Services == nil {
			return nil, structs.NotFound(structs.ErrJobNotFound)
		}
		return reply.Services, nil
	})
}

func (s *HTTPServer) allocServices(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.AllocSpecificRequest{AllocID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "ServiceRegistration.ListByAlloc", &args, func(reply *structs.ServiceRegistrationsResponse) (any, error) {
		if reply.Services == nil {
			return nil, structs.NotFound(structs.ErrAllocNotFound)
		}
		return reply.Services, nil
	})
}
