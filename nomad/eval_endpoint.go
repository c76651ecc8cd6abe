package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Eval is the evaluation RPC endpoint.
type Eval struct {
	srv *Server
}

// GetEval reads one evaluation; read-job in its namespace is needed.
func (e *Eval) GetEval(args *structs.EvalSpecificRequest, reply *structs.SingleEvalResponse) error {
	if done, err := e.srv.forwardRead("Eval.GetEval", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := e.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	err = e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		eval, err := store.EvalByID(ws, args.EvalID)
		if err != nil {
			return 0, err
		}
		reply.Eval = eval
		if eval != nil {
			return eval.ModifyIndex, nil
		}
		return store.Index("evals"), nil
	})
	if err != nil {
		return err
	}
	if reply.Eval != nil && !aclObj.AllowNamespaceOperation(reply.Eval.Namespace, acl.NamespaceCapabilityReadJob) {
		ns := reply.Eval.Namespace
		reply.Eval = nil
		return structs.PermissionDenied("read-job capability required in namespace %q", ns)
	}
	return nil
}

// List lists evaluations in the namespace ("*": those the caller may read).
func (e *Eval) List(args *structs.EvalListRequest, reply *structs.EvalListResponse) error {
	if done, err := e.srv.forwardRead("Eval.List", &args.QueryOptions, args, reply); done {
		return err
	}
	visible, err := e.srv.namespaceReader(&args.QueryOptions, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		evals, err := store.Evals(ws, args.Namespace, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Evaluations, reply.NextToken, err = paginator.Page(evals, args.QueryOptions,
			paginator.Order[*structs.Evaluation]{Key: func(ev *structs.Evaluation) paginator.Key {
				return createIndexOrID(args.Prefix, ev.CreateIndex, ev.ID)
			}},
			func(ev *structs.Evaluation) bool {
				return (args.JobID == "" || ev.JobID == args.JobID) &&
					(args.Status == "" || ev.Status == args.Status) && visible(ev.Namespace)
			},
			func(ev *structs.Evaluation) (*structs.Evaluation, error) { return ev, nil })
		if err != nil {
			return 0, err
		}
		return store.Index("evals"), nil
	})
}
