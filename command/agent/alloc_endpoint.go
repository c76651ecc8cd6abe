package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/structs"
)

// allocStop stops an allocation so that the scheduler replaces it; ?no_shutdown_delay=true
// skips the tasks' shutdown delay, ?reschedule=true marks it for rescheduling too.
func (s *HTTPServer) allocStop(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.AllocStopRequest{AllocID: r.PathValue("id"), WriteRequest: writeRequest(r)}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"no_shutdown_delay", &args.NoShutdownDelay}, {"reschedule", &args.Reschedule}} {
		if r.URL.Query().Get(f.name) == "" {
			continue
		}
		v, err := boolQuery(r, f.name)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	return write(s, w, "Alloc.Stop", &args, wholeReply[structs.AllocStopResponse])
}

// allocList lists allocations; ?task_states=false leaves out their task states and
// ?resources=true adds their allocated resources, as upstream.
func (s *HTTPServer) allocList(w http.ResponseWriter, r *http.Request) (any, error) {
	withStates := true
	if r.URL.Query().Get("task_states") != "" {
		v, err := boolQuery(r, "task_states")
		if err != nil {
			return nil, err
		}
		withStates = v
	}
	withResources, err := boolQuery(r, "resources")
	if err != nil {
		return nil, err
	}
	args := structs.AllocListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "Alloc.List", &args, func(reply *structs.AllocListResponse) (any, error) {
		if !withStates || !withResources {
			for i, stub := range reply.Allocations {
				c := *stub
				if !withStates {
					c.TaskStates = nil
				}
				if !withResources {
					c.AllocatedResources = nil
				}
				reply.Allocations[i] = &c
			}
		}
		return nonNil(reply.Allocations), nil
	})
}

func (s *HTTPServer) allocRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.AllocSpecificRequest{AllocID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "Alloc.GetAlloc", &args, func(reply *structs.SingleAllocResponse) (any, error) {
		return found(reply.Alloc, structs.NotFound(structs.ErrAllocNotFound))
	})
}
