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

// evalGet needs read-job in the evaluation's own namespace, whichever the request names. An
// evaluation unknown when the call arrives is refused only to a caller who may read jobs
// nowhere (it could read no evaluation at all); one that appears while the call blocks is
// checked once found.
var evalGet = read("Eval.GetEval", spec[structs.EvalSpecificRequest, structs.SingleEvalResponse]{
	Authorize: func(c *rpcCall, req *structs.EvalSpecificRequest) error {
		eval, err := c.srv.State().EvalByID(nil, req.EvalID)
		if err != nil {
			return err
		}
		if eval != nil {
			return evalReadAllowed(c, eval.Namespace)
		}
		if !c.acl.AllowAnyNamespaceOperation(acl.NamespaceCapabilityReadJob) {
			ns := req.Namespace
			if ns == "" {
				ns = structs.DefaultNamespace
			}
			return structs.PermissionDenied("read-job capability required in namespace %q", ns)
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.EvalSpecificRequest, reply *structs.SingleEvalResponse) error {
		err := c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			eval, err := store.EvalByID(ws, req.EvalID)
			if err != nil {
				return 0, err
			}
			reply.Eval = eval
			if eval != nil {
				if req.IncludeRelated {
					withRelated := eval.Copy()
					if withRelated.RelatedEvals, err = relatedEvals(ws, store, eval); err != nil {
						return 0, err
					}
					reply.Eval = withRelated
				}
				return eval.ModifyIndex, nil
			}
			return store.Index("evals"), nil
		})
		if err != nil {
			return err
		}
		if reply.Eval != nil {
			if err := evalReadAllowed(c, reply.Eval.Namespace); err != nil {
				reply.Eval = nil
				return err
			}
		}
		return nil
	},
})

// evalReadAllowed is read-job in the namespace of an evaluation found.
func evalReadAllowed(c *rpcCall, namespace string) error {
	if c.acl.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityReadJob) {
		return nil
	}
	return structs.PermissionDenied("read-job capability required in namespace %q", namespace)
}

// evalListRule is read-job in the request's namespace; with "*" the answer holds only the
// evaluations of namespaces where the caller has it.
var evalListRule = opsNamespaceOrAll(acl.NamespaceCapabilityReadJob, func(req *structs.EvalListRequest) string { return req.Namespace })

var evalList = read("Eval.List", spec[structs.EvalListRequest, structs.EvalListResponse]{
	Prepare:   func(req *structs.EvalListRequest) error { opsDefaultQueryNamespace(&req.QueryOptions); return nil },
	Authorize: evalListRule,
	Serve: func(c *rpcCall, req *structs.EvalListRequest, reply *structs.EvalListResponse) error {
		visible := opsVisibleNamespaces(c, req.Namespace, acl.NamespaceCapabilityReadJob)
		// Index 0 while no evaluation was ever written, as upstream.
		return pagedList(c.srv.blockingRPCZero, &req.QueryOptions, &reply.QueryMeta, &reply.Evaluations,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.Evaluation, error) {
				return store.Evals(ws, req.Namespace, req.Prefix)
			},
			paginator.Order[*structs.Evaluation]{Key: func(ev *structs.Evaluation) paginator.Key {
				return createIndexOrID(req.Prefix, ev.CreateIndex, ev.ID)
			}},
			func(ev *structs.Evaluation) bool {
				return (req.JobID == "" || ev.JobID == req.JobID) &&
					(req.Status == "" || ev.Status == req.Status) && visible(ev.Namespace)
			},
			func(ev *structs.Evaluation) (*structs.Evaluation, error) { return ev, nil },
			func(store *state.StateStore) uint64 { return store.Index("evals") })
	},
})

// evalCount counts the evaluations that Eval.List would return across every page: those in
// the request's namespace (or every readable one with "*") that match its prefix and filter.
var evalCount = read("Eval.Count", spec[structs.EvalListRequest, structs.EvalCountResponse]{
	Prepare:   func(req *structs.EvalListRequest) error { opsDefaultQueryNamespace(&req.QueryOptions); return nil },
	Authorize: evalListRule,
	Serve: func(c *rpcCall, req *structs.EvalListRequest, reply *structs.EvalCountResponse) error {
		visible := opsVisibleNamespaces(c, req.Namespace, acl.NamespaceCapabilityReadJob)
		filter, err := paginator.NewFilter(req.Filter)
		if err != nil {
			return err
		}
		return c.srv.blockingRPCZero(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			evals, err := store.Evals(ws, req.Namespace, req.Prefix)
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
	},
})

// GetEval reads one evaluation; read-job in its namespace is needed.
func (e *Eval) GetEval(args *structs.EvalSpecificRequest, reply *structs.SingleEvalResponse) error {
	return evalGet.Call(e.srv, args, reply)
}

// List lists evaluations in the namespace ("*": those the caller may read).
func (e *Eval) List(args *structs.EvalListRequest, reply *structs.EvalListResponse) error {
	return evalList.Call(e.srv, args, reply)
}

// Count counts the evaluations List would return across every page.
func (e *Eval) Count(args *structs.EvalListRequest, reply *structs.EvalCountResponse) error {
	return evalCount.Call(e.srv, args, reply)
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
