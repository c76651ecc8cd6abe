package nomad

import (
	"sort"

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
			if args.IncludeRelated {
				c := eval.Copy()
				if c.RelatedEvals, err = relatedEvals(ws, store, eval); err != nil {
					return 0, err
				}
				reply.Eval = c
			}
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
	// Index 0 while no evaluation was ever written, as upstream.
	return e.srv.blockingRPCZero(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
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

// Count counts the evaluations that List would return across every page: those in the
// request's namespace (or every readable one with "*") that match its prefix and filter.
func (e *Eval) Count(args *structs.EvalListRequest, reply *structs.EvalCountResponse) error {
	if done, err := e.srv.forwardRead("Eval.Count", &args.QueryOptions, args, reply); done {
		return err
	}
	visible, err := e.srv.namespaceReader(&args.QueryOptions, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	filter, err := paginator.NewFilter(args.Filter)
	if err != nil {
		return err
	}
	return e.srv.blockingRPCZero(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		evals, err := store.Evals(ws, args.Namespace, args.Prefix)
		if err != nil {
			return 0, err
		}
		count := 0
		for _, ev := range evals {
			if !visible(ev.Namespace) {
				continue
			}
			ok, err := filter.Match(ev)
			if err != nil {
				return 0, structs.BadRequest("invalid filter: %v", err)
			}
			if ok {
				count++
			}
		}
		reply.Count = count
		return store.Index("evals"), nil
	})
}

// maxRelatedEvals bounds the evaluations one answer lists as related.
const maxRelatedEvals = 100

// relatedEvals follows the NextEval, PreviousEval and BlockedEval links from eval, in both
// directions and transitively, and returns the stubs of the evaluations found, oldest first.
func relatedEvals(ws memdb.WatchSet, store *state.StateStore, eval *structs.Evaluation) ([]*structs.EvaluationStub, error) {
	seen := map[string]bool{eval.ID: true}
	queue := []*structs.Evaluation{eval}
	var out []*structs.EvaluationStub
	for len(queue) > 0 && len(out) < maxRelatedEvals {
		cur := queue[0]
		queue = queue[1:]
		for _, id := range []string{cur.NextEval, cur.PreviousEval, cur.BlockedEval} {
			if id == "" || seen[id] {
				continue
			}
			seen[id] = true
			next, err := store.EvalByID(ws, id)
			if err != nil {
				return nil, err
			}
			if next == nil {
				continue
			}
			queue = append(queue, next)
			out = append(out, &structs.EvaluationStub{ID: next.ID, Namespace: next.Namespace, Priority: next.Priority,
				Type: next.Type, TriggeredBy: next.TriggeredBy, JobID: next.JobID, Status: next.Status,
				CreateIndex: next.CreateIndex})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
	return out, nil
}
