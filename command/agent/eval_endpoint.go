package agent

import (
	"net/http"

	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
)

// evalDelete deletes the evaluations the body names ({"EvalIDs": [...]}), as upstream.
func (s *HTTPServer) evalDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	var args nomad.EvalDeleteUserRequest
	if err := decodeBody(r, &args); err != nil {
		return nil, err
	}
	args.WriteRequest = writeRequest(r)
	return s.writeForIndex(w, "Eval.Delete", &args)
}

func (s *HTTPServer) evalList(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	args := structs.EvalListRequest{JobID: q.Get("job"), Status: q.Get("status"), QueryOptions: queryOptions(r)}
	return read(s, w, "Eval.List", &args, func(reply *structs.EvalListResponse) (any, error) {
		return nonNil(reply.Evaluations), nil
	})
}

// evalCount counts the evaluations a list with the same namespace, prefix and filter would
// return across all its pages.
func (s *HTTPServer) evalCount(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalListRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "Eval.Count", &args, wholeReply[structs.EvalCountResponse])
}

// evalRead reads an evaluation; ?related=true adds the evaluations linked to it.
func (s *HTTPServer) evalRead(w http.ResponseWriter, r *http.Request) (any, error) {
	related, err := boolQuery(r, "related")
	if err != nil {
		return nil, err
	}
	args := structs.EvalSpecificRequest{EvalID: r.PathValue("id"), IncludeRelated: related, QueryOptions: queryOptions(r)}
	return read(s, w, "Eval.GetEval", &args, func(reply *structs.SingleEvalResponse) (any, error) {
		return found(reply.Eval, structs.NotFound(structs.ErrEvalNotFound))
	})
}

// evalAllocations lists the allocations the evaluation placed.
func (s *HTTPServer) evalAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalSpecificRequest{EvalID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "Alloc.ListByEval", &args, func(reply *structs.AllocListResponse) (any, error) {
		return nonNil(reply.Allocations), nil
	})
}
