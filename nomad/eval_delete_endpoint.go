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

// Delete removes evaluations an operator names. As upstream, it needs a management token and
// the scheduler configuration's PauseEvalBroker set, so that no worker is acting on what is
// being removed; every ID must exist, or nothing is deleted.
func (e *Eval) Delete(args *EvalDeleteUserRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Eval.Delete", args, reply); done {
		return err
	}
	aclObj, _, err := e.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() && !aclObj.IsDisabled() {
		return structs.PermissionDenied("management token required to delete evaluations")
	}
	if !e.srv.schedulerConfig().PauseEvalBroker {
		return structs.BadRequest("eval broker is enabled; eval broker must be paused to delete evals")
	}
	if args.Filter != "" {
		return structs.BadRequest("deleting evaluations by filter is not supported: name them in EvalIDs")
	}
	if len(args.EvalIDs) == 0 {
		return structs.BadRequest("EvalIDs: name at least one evaluation")
	}
	if len(args.EvalIDs) > maxEvalDelete {
		return structs.BadRequest("EvalIDs: %d evaluations, the limit is %d", len(args.EvalIDs), maxEvalDelete)
	}
	store := e.srv.State()
	for _, id := range args.EvalIDs {
		eval, err := store.EvalByID(nil, id)
		if err != nil {
			return err
		}
		if eval == nil {
			return structs.NotFound(structs.ErrEvalNotFound)
		}
	}
	if err := e.srv.checkLeader(); err != nil {
		return err
	}
	index, err := e.srv.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: args.EvalIDs})
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
