package nomad

import (
	"cmp"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Search is the search RPC endpoint. It answers only objects the caller may read: a context
// the caller has no access to is refused when asked for by name and left out of "all"; rows
// of other namespaces (with namespace "*"), node pools, namespaces and variables are filtered
// one by one.
type Search struct {
	srv *Server
}

// Contexts each search answers for "all", in upstream's sets.
var (
	prefixContexts = []structs.SearchContext{
		structs.SearchAllocs, structs.SearchDeployments, structs.SearchEvals, structs.SearchJobs,
		structs.SearchNodes, structs.SearchNodePools, structs.SearchNamespaces, structs.SearchPlugins,
		structs.SearchScalingPolicies, structs.SearchVariables, structs.SearchVolumes, structs.SearchHostVolumes,
	}
	fuzzyContexts = []structs.SearchContext{
		structs.SearchAllocs, structs.SearchJobs, structs.SearchGroups, structs.SearchServices,
		structs.SearchTasks, structs.SearchImages, structs.SearchCommands, structs.SearchClasses,
		structs.SearchNodes, structs.SearchNodePools, structs.SearchNamespaces, structs.SearchPlugins,
		structs.SearchVariables, structs.SearchVolumes, structs.SearchHostVolumes,
	}
)

// jobContexts are read from jobs and their allocations: they need read-job.
var jobContexts = map[structs.SearchContext]bool{
	structs.SearchJobs: true, structs.SearchEvals: true, structs.SearchAllocs: true,
	structs.SearchDeployments: true, structs.SearchScalingPolicies: true, structs.SearchGroups: true,
	structs.SearchTasks: true, structs.SearchServices: true, structs.SearchImages: true,
	structs.SearchCommands: true,
}

// searchCandidate is one searchable object of a context: id is what a prefix search
// matches and answers; name and scope are what a fuzzy search matches and answers.
type searchCandidate struct {
	namespace string // for the per-row ACL filter; "" for objects outside namespaces
	id        string
	name      string
	scope     []string
}

// searchPrefix answers the IDs that start with Prefix.
var searchPrefix = read("Search.PrefixSearch", spec[structs.SearchRequest, structs.SearchResponse]{
	Caller: callerAnyone,
	Authorize: func(c *rpcCall, req *structs.SearchRequest) error {
		return searchContextRule(c, req.Namespace, req.Context, prefixContexts)
	},
	Validate: func(req *structs.SearchRequest) error { return validateSearchContext(req.Context, prefixContexts) },
	Serve: func(c *rpcCall, args *structs.SearchRequest, reply *structs.SearchResponse) error {
		namespace := requestNamespace("", args.Namespace)
		contexts := searchContexts(c.acl, namespace, args.Context, prefixContexts)
		return c.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			reply.Matches = map[structs.SearchContext][]string{}
			reply.Truncations = map[structs.SearchContext]bool{}
			for _, ctx := range contexts {
				cands, err := searchCandidates(store, c.acl, namespace, ctx, false)
				if err != nil {
					return 0, err
				}
				ids := []string{}
				for _, cand := range cands {
					if strings.HasPrefix(cand.id, args.Prefix) {
						ids = append(ids, cand.id)
					}
				}
				slices.Sort(ids)
				ids = slices.Compact(ids)
				reply.Truncations[ctx] = len(ids) > structs.SearchLimit
				reply.Matches[ctx] = ids[:min(len(ids), structs.SearchLimit)]
			}
			return store.LatestIndex(), nil
		})
	},
})

// searchFuzzy answers the objects whose name contains Text, ignoring case: exact matches
// first, then prefixes, then the rest, each by name.
var searchFuzzy = read("Search.FuzzySearch", spec[structs.FuzzySearchRequest, structs.FuzzySearchResponse]{
	Caller: callerAnyone,
	Authorize: func(c *rpcCall, req *structs.FuzzySearchRequest) error {
		return searchContextRule(c, req.Namespace, req.Context, fuzzyContexts)
	},
	Validate: func(req *structs.FuzzySearchRequest) error {
		if err := validateSearchContext(req.Context, fuzzyContexts); err != nil {
			return err
		}
		_, err := structs.ParseFuzzyText(req.Text)
		return err
	},
	Serve: func(c *rpcCall, args *structs.FuzzySearchRequest, reply *structs.FuzzySearchResponse) error {
		namespace := requestNamespace("", args.Namespace)
		contexts := searchContexts(c.acl, namespace, args.Context, fuzzyContexts)
		text, err := structs.ParseFuzzyText(args.Text)
		if err != nil {
			return err
		}
		return c.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			reply.Matches = map[structs.SearchContext][]structs.FuzzyMatch{}
			reply.Truncations = map[structs.SearchContext]bool{}
			for _, ctx := range contexts {
				cands, err := searchCandidates(store, c.acl, namespace, ctx, true)
				if err != nil {
					return 0, err
				}
				type ranked struct {
					rank int
					c    searchCandidate
				}
				var hits []ranked
				for _, cand := range cands {
					if r := structs.FuzzyRank(cand.name, text); r > 0 {
						hits = append(hits, ranked{r, cand})
					}
				}
				slices.SortStableFunc(hits, func(a, b ranked) int {
					return cmp.Or(cmp.Compare(a.rank, b.rank), strings.Compare(a.c.name, b.c.name),
						strings.Compare(strings.Join(a.c.scope, "\x00"), strings.Join(b.c.scope, "\x00")))
				})
				matches := []structs.FuzzyMatch{}
				for _, h := range hits[:min(len(hits), structs.SearchLimit)] {
					matches = append(matches, structs.FuzzyMatch{ID: h.c.name, Scope: h.c.scope})
				}
				reply.Matches[ctx] = matches
				reply.Truncations[ctx] = len(hits) > structs.SearchLimit
			}
			return store.LatestIndex(), nil
		})
	},
})

// PrefixSearch answers the IDs that start with Prefix.
func (s *Search) PrefixSearch(args *structs.SearchRequest, reply *structs.SearchResponse) error {
	return searchPrefix.Call(s.srv, args, reply)
}

// FuzzySearch answers the objects whose name contains Text.
func (s *Search) FuzzySearch(args *structs.FuzzySearchRequest, reply *structs.FuzzySearchResponse) error {
	return searchFuzzy.Call(s.srv, args, reply)
}

// searchContextRule refuses a context named outright that the caller cannot read in the
// namespace. Search needs no capability as such: "all" keeps the contexts the caller can
// read, each filtered row by row, so a caller who can read nothing gets empty matches, as
// upstream. A context that is not searchable is no question of access: Validate refuses it.
func searchContextRule(c *rpcCall, reqNS string, asked structs.SearchContext, all []structs.SearchContext) error {
	if asked == structs.SearchAll || !slices.Contains(all, asked) {
		return nil
	}
	namespace := requestNamespace("", reqNS)
	if !searchContextAllowed(c.acl, namespace, asked) {
		return structs.PermissionDenied("no read access to search context %q in namespace %q", asked, namespace)
	}
	return nil
}

// validateSearchContext refuses a context that is empty or not one of the searchable ones.
func validateSearchContext(asked structs.SearchContext, all []structs.SearchContext) error {
	if asked == "" {
		return structs.BadRequest("invalid Context: must not be empty")
	}
	if asked != structs.SearchAll && !slices.Contains(all, asked) {
		return structs.BadRequest("invalid Context %q", asked)
	}
	return nil
}

// searchContexts resolves an authorised, valid context to the contexts to search: "all"
// keeps those the caller can read.
func searchContexts(aclObj *acl.ACL, namespace string, asked structs.SearchContext, all []structs.SearchContext) []structs.SearchContext {
	if asked != structs.SearchAll {
		return []structs.SearchContext{asked}
	}
	var out []structs.SearchContext
	for _, ctx := range all {
		if searchContextAllowed(aclObj, namespace, ctx) {
			out = append(out, ctx)
		}
	}
	return out
}

// searchContextAllowed is the coarse check: could the caller read anything of ctx here?
func searchContextAllowed(aclObj *acl.ACL, namespace string, ctx structs.SearchContext) bool {
	switch {
	case jobContexts[ctx]:
		if namespace == structs.AllNamespacesSentinel {
			return aclObj.AllowAnyNamespaceOperation(acl.NamespaceCapabilityReadJob)
		}
		return aclObj.AllowNamespaceOperation(namespace, acl.NamespaceCapabilityReadJob)
	case ctx == structs.SearchNodes, ctx == structs.SearchClasses:
		return aclObj.AllowNodeRead()
	case ctx == structs.SearchPlugins, ctx == structs.SearchVolumes:
		return aclObj.AllowPluginList()
	}
	// Node pools, namespaces, variables and host volumes are filtered row by row.
	return aclObj != nil
}

// searchCandidates lists what the caller may see of one context. fuzzy adds the contexts whose
// objects live inside jobs (groups, tasks, services, images, commands) and node classes.
func searchCandidates(store *state.StateStore, aclObj *acl.ACL, namespace string, ctx structs.SearchContext, fuzzy bool) ([]searchCandidate, error) {
	readJob := func(ns string) bool { return aclObj.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob) }
	var out []searchCandidate
	switch ctx {
	case structs.SearchJobs, structs.SearchGroups, structs.SearchTasks, structs.SearchServices,
		structs.SearchImages, structs.SearchCommands:
		jobs, err := store.Jobs(nil, namespace, "")
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			if readJob(j.Namespace) {
				out = append(out, jobCandidates(j, ctx)...)
			}
		}
	case structs.SearchEvals:
		return collect(func() ([]*structs.Evaluation, error) { return store.Evals(nil, namespace, "") },
			func(e *structs.Evaluation) bool { return readJob(e.Namespace) },
			func(e *structs.Evaluation) searchCandidate {
				return searchCandidate{namespace: e.Namespace, id: e.ID, name: e.ID, scope: []string{e.Namespace, e.JobID}}
			})
	case structs.SearchAllocs:
		return collect(func() ([]*structs.Allocation, error) { return store.Allocs(nil, namespace, "") },
			func(a *structs.Allocation) bool { return readJob(a.Namespace) },
			func(a *structs.Allocation) searchCandidate {
				return searchCandidate{namespace: a.Namespace, id: a.ID, name: a.Name, scope: []string{a.Namespace, a.ID}}
			})
	case structs.SearchNodes, structs.SearchClasses:
		nodes, err := store.Nodes(nil, "")
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			if ctx == structs.SearchNodes {
				out = append(out, searchCandidate{id: n.ID, name: n.Name, scope: []string{n.ID}})
			} else if n.NodeClass != "" && fuzzy {
				out = append(out, searchCandidate{id: n.NodeClass, name: n.NodeClass})
			}
		}
		if ctx == structs.SearchClasses {
			slices.SortFunc(out, func(a, b searchCandidate) int { return strings.Compare(a.name, b.name) })
			out = slices.CompactFunc(out, func(a, b searchCandidate) bool { return a.name == b.name })
		}
	case structs.SearchNodePools:
		return collect(func() ([]*structs.NodePool, error) { return store.NodePools(nil, "") },
			func(p *structs.NodePool) bool {
				return aclObj.AllowNodePoolOperation(p.Name, acl.NodePoolCapabilityRead)
			},
			func(p *structs.NodePool) searchCandidate { return searchCandidate{id: p.Name, name: p.Name} })
	case structs.SearchNamespaces:
		return collect(func() ([]*structs.Namespace, error) { return store.Namespaces(nil) },
			func(ns *structs.Namespace) bool { return aclObj.AllowNamespace(ns.Name) },
			func(ns *structs.Namespace) searchCandidate { return searchCandidate{id: ns.Name, name: ns.Name} })
	case structs.SearchScalingPolicies:
		return collect(func() ([]*structs.ScalingPolicy, error) { return store.ScalingPolicies(nil, namespace, "") },
			func(p *structs.ScalingPolicy) bool { return readJob(p.Namespace) },
			func(p *structs.ScalingPolicy) searchCandidate {
				return searchCandidate{namespace: p.Namespace, id: p.ID, name: p.ID, scope: []string{p.Namespace, p.JobID}}
			})
	case structs.SearchVariables:
		return collect(func() ([]*structs.VariableEncrypted, error) { return store.Variables(nil, namespace, "") },
			func(v *structs.VariableEncrypted) bool {
				return aclObj.AllowVariableOperation(v.Namespace, v.Path, acl.VariablesCapabilityList)
			},
			func(v *structs.VariableEncrypted) searchCandidate {
				return searchCandidate{namespace: v.Namespace, id: v.Path, name: v.Path, scope: []string{v.Namespace}}
			})
	}
	// Deployments, plugins, volumes and host volumes: none exist here yet.
	return out, nil
}

// collect lists the objects of one context and makes a candidate of each the caller may see.
func collect[T any](list func() ([]*T, error), visible func(*T) bool, candidate func(*T) searchCandidate) ([]searchCandidate, error) {
	all, err := list()
	if err != nil {
		return nil, err
	}
	var out []searchCandidate
	for _, obj := range all {
		if visible(obj) {
			out = append(out, candidate(obj))
		}
	}
	return out, nil
}

// jobCandidates are the searchable objects of one job for ctx, scoped by namespace, job,
// group and task as far as they are nested.
func jobCandidates(j *structs.Job, ctx structs.SearchContext) []searchCandidate {
	ns := j.Namespace
	if ctx == structs.SearchJobs {
		return []searchCandidate{{namespace: ns, id: j.ID, name: j.ID, scope: []string{ns}}}
	}
	var out []searchCandidate
	add := func(name string, scope ...string) {
		if name != "" {
			out = append(out, searchCandidate{namespace: ns, id: name, name: name, scope: scope})
		}
	}
	for _, tg := range j.TaskGroups {
		group := ""
		if tg.Name != nil {
			group = *tg.Name
		}
		switch ctx {
		case structs.SearchGroups:
			add(group, ns, j.ID)
		case structs.SearchServices:
			for _, svc := range tg.Services {
				add(svc.Name, ns, j.ID, group)
			}
		}
		for _, task := range tg.Tasks {
			switch ctx {
			case structs.SearchTasks:
				add(task.Name, ns, j.ID, group)
			case structs.SearchServices:
				for _, svc := range task.Services {
					add(svc.Name, ns, j.ID, group, task.Name)
				}
			case structs.SearchImages:
				if img, ok := task.Config["image"].(string); ok {
					add(img, ns, j.ID, group, task.Name)
				}
			case structs.SearchCommands:
				if command, ok := task.Config["command"].(string); ok {
					add(command, ns, j.ID, group, task.Name)
				}
			}
		}
	}
	return out
}
