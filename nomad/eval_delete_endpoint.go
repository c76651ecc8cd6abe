package nomad

import "github.com/nomadfork/nomad/structs"

// maxEvalDelete bounds the evaluations one delete names, as upstream's limit does: one Raft
// entry each, of bounded size.
const maxEvalDelete = 7281

// EvalDeleteUserRequest deletes evaluations by ID (DELETE /v1/evaluations).
type EvalDeleteUserRequest struct {
	EvalIDs []string
	Filter  string
	structs.WriteRequest
}

// evalDelete removes evaluations an operator names. As upstream, it needs a management token
// and the scheduler configuration's PauseEvalBroker set, so that no worker is acting on what
// is being removed; every ID must exist, or nothing is deleted. The paused broker is checked
// before the request's shape, as it always was, so Serve checks both in that order.
var evalDelete = write("Eval.Delete", spec[EvalDeleteUserRequest, structs.GenericResponse]{
	Authorize: management[EvalDeleteUserRequest]("delete evaluations"),
	Serve: func(c *rpcCall, req *EvalDeleteUserRequest, reply *structs.GenericResponse) error {
		if !c.srv.schedulerConfig().PauseEvalBroker {
			return structs.BadRequest("eval broker is enabled; eval broker must be paused to delete evals")
		}
		if req.Filter != "" {
			return structs.BadRequest("deleting evaluations by filter is not supported: name them in EvalIDs")
		}
		if len(req.EvalIDs) == 0 {
			return structs.BadRequest("EvalIDs: name at least one evaluation")
		}
		if len(req.EvalIDs) > maxEvalDelete {
			return structs.BadRequest("EvalIDs: %d evaluations, the limit is %d", len(req.EvalIDs), maxEvalDelete)
		}
		store := c.srv.State()
		for _, id := range req.EvalIDs {
			eval, err := store.EvalByID(nil, id)
			if err != nil {
				return err
			}
			if eval == nil {
				return structs.NotFound(structs.ErrEvalNotFound)
			}
		}
		index, err := c.srv.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: req.EvalIDs})
		if err != nil {
			return err
		}
		reply.Index = index
		return nil
	},
})

// Delete removes evaluations an operator names.
func (e *Eval) Delete(args *EvalDeleteUserRequest, reply *structs.GenericResponse) error {
	return evalDelete.Call(e.srv, args, reply)
}
