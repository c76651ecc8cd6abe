package agent

import (
	"net/http"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (s *HTTPServer) registerEvalRoutes(mux *http.ServeMux) {
	s.handle(mux, "/v1/evaluations", methods{"GET": s.evalList})
	s.handle(mux, "/v1/evaluation/{id}", methods{"GET": s.evalRead})
	s.handle(mux, "/v1/evaluation/{id}/allocations", methods{"GET": s.evalAllocations})
}

func (s *HTTPServer) evalList(w http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	args := structs.EvalListRequest{JobID: q.Get("job"), Status: q.Get("status"), QueryOptions: queryOptions(r)}
	var reply structs.EvalListResponse
	if err := s.srv.Endpoints.Eval.List(&args, &reply); err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	return nonNil(reply.Evaluations), nil
}

func (s *HTTPServer) evalRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalSpecificRequest{EvalID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	var reply structs.SingleEvalResponse
	if err := s.srv.Endpoints.Eval.GetEval(&args, &reply); err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	if reply.Eval == nil {
		return nil, structs.NotFound(structs.ErrEvalNotFound)
	}
	return reply.Eval, nil
}

// evalAllocations answers an empty list: nothing places allocations yet. The eval read comes
// first, for its authorisation check and so an unknown eval is a 404; the answer then blocks
// on the eval like a real query would.
func (s *HTTPServer) evalAllocations(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalSpecificRequest{EvalID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	check := args
	check.MinQueryIndex = 0
	var reply structs.SingleEvalResponse
	if err := s.srv.Endpoints.Eval.GetEval(&check, &reply); err != nil {
		return nil, err
	}
	if reply.Eval == nil {
		setMeta(w, &reply.QueryMeta)
		return nil, structs.NotFound(structs.ErrEvalNotFound)
	}
	err := s.blockOnEmpty(w, r, args.QueryOptions, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		if _, err := store.EvalByID(ws, args.EvalID); err != nil {
			return 0, err
		}
		return store.Index("evals"), nil
	})
	if err != nil {
		return nil, err
	}
	return []any{}, nil
}
