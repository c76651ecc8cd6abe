package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

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
