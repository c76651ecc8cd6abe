package nomad

import (
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// maxJobStatusesJobs bounds the jobs one request may name.
const maxJobStatusesJobs = 1000

// Statuses answers /v1/jobs/statuses: a compact status of many jobs (their allocations, the
// sum of their groups' counts, their children's statuses and their latest deployment), the
// most recently modified first. Child jobs of periodic and parameterized jobs are left out
// unless IncludeChildren; a parent lists their statuses instead. It needs read-job in each
// namespace answered for.
var jobStatuses = read("Job.Statuses", spec[structs.JobStatusesRequest, structs.JobStatusesResponse]{
	Prepare:   jobQueryDefaultNamespace[structs.JobStatusesRequest],
	Authorize: jobListingRule[structs.JobStatusesRequest](acl.NamespaceCapabilityReadJob),
	Validate: func(req *structs.JobStatusesRequest) error {
		if len(req.Jobs) > maxJobStatusesJobs {
			return structs.BadRequest("Jobs: at most %d jobs per request, got %d", maxJobStatusesJobs, len(req.Jobs))
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.JobStatusesRequest, reply *structs.JobStatusesResponse) error {
		return c.srv.Endpoints.Job.statuses(c, req, reply)
	},
})

// Statuses answers /v1/jobs/statuses.
func (j *Job) Statuses(args *structs.JobStatusesRequest, reply *structs.JobStatusesResponse) error {
	return jobStatuses.Call(j.srv, args, reply)
}

// statuses serves an authorized, valid Statuses request.
func (j *Job) statuses(c *rpcCall, args *structs.JobStatusesRequest, reply *structs.JobStatusesResponse) error {
	visible := func(ns string) bool {
		return jobVisibleIn(c, &args.QueryOptions, acl.NamespaceCapabilityReadJob, ns)
	}
	filter, err := paginator.NewFilter(args.Filter)
	if err != nil {
		return err
	}
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.Jobs(ws, structs.AllNamespacesSentinel, "")
		if err != nil {
			return 0, err
		}
		children := map[structs.NamespacedID][]string{}
		for _, job := range all {
			if job.ParentID != "" {
				parent := structs.NamespacedID{ID: job.ParentID, Namespace: job.Namespace}
				children[parent] = append(children[parent], job.Status)
			}
		}
		var wanted map[structs.NamespacedID]bool
		if len(args.Jobs) > 0 {
			wanted = make(map[structs.NamespacedID]bool, len(args.Jobs))
			for _, id := range args.Jobs {
				wanted[id] = true
			}
		}
		candidates := make([]*structs.Job, 0, len(all))
		for _, job := range all {
			id := structs.NamespacedID{ID: job.ID, Namespace: job.Namespace}
			switch {
			case !visible(job.Namespace):
			case wanted != nil && !wanted[id]:
			case wanted == nil && args.Namespace != structs.AllNamespacesSentinel && job.Namespace != args.Namespace:
			case wanted == nil && job.ParentID != "" && !args.IncludeChildren:
			default:
				candidates = append(candidates, job)
			}
		}
		// Newest change first; ties (never in practice: indexes are unique per write of a row)
		// by namespace and ID so pages are stable.
		slices.SortFunc(candidates, func(a, b *structs.Job) int {
			if a.ModifyIndex != b.ModifyIndex {
				if a.ModifyIndex > b.ModifyIndex {
					return -1
				}
				return 1
			}
			if a.Namespace != b.Namespace {
				if a.Namespace < b.Namespace {
					return -1
				}
				return 1
			}
			if a.ID < b.ID {
				return -1
			}
			if a.ID > b.ID {
				return 1
			}
			return 0
		})
		// Without a filter only the page's jobs need their allocations and deployments read;
		// a filter may look at those, so then every candidate is built before paging.
		if args.Filter == "" {
			candidates = pageOf(candidates, func(j *structs.Job) string { return j.Namespace + "." + j.ID }, args.QueryOptions, &reply.QueryMeta)
		}
		out := make([]structs.JobStatusesJob, 0, len(candidates))
		for _, job := range candidates {
			status, err := jobStatus(ws, store, job, children)
			if err != nil {
				return 0, err
			}
			ok, err := filter.Match(status)
			if err != nil {
				return 0, structs.BadRequest("invalid filter: %v", err)
			}
			if ok {
				out = append(out, status)
			}
		}
		if args.Filter != "" {
			out = pageOf(out, func(s structs.JobStatusesJob) string { return s.Namespace + "." + s.ID }, args.QueryOptions, &reply.QueryMeta)
		}
		reply.Jobs = out
		return maxIndex(store, "jobs", "allocs", "deployment"), nil
	})
}

// pageOf cuts one page out of sorted items. The token is the key of the first item of the
// next page; an unknown token gives an empty page.
func pageOf[T any](all []T, key func(T) string, opts structs.QueryOptions, meta *structs.QueryMeta) []T {
	start := 0
	if opts.NextToken != "" {
		start = len(all)
		for i, item := range all {
			if key(item) == opts.NextToken {
				start = i
				break
			}
		}
	}
	page := all[start:]
	if opts.PerPage > 0 && len(page) > int(opts.PerPage) {
		meta.NextToken = key(page[opts.PerPage])
		page = page[:opts.PerPage]
	}
	return page
}

func jobStatus(ws memdb.WatchSet, store *state.StateStore, job *structs.Job, children map[structs.NamespacedID][]string) (structs.JobStatusesJob, error) {
	id := structs.NamespacedID{ID: job.ID, Namespace: job.Namespace}
	out := structs.JobStatusesJob{
		NamespacedID: id, Name: job.Name, Type: job.Type, NodePool: job.NodePool,
		Datacenters: job.Datacenters, Priority: job.Priority, Version: job.Version,
		SubmitTime: job.SubmitTime, ModifyIndex: job.ModifyIndex, ParentID: job.ParentID,
		Stop: job.Stop, Status: job.Status, Allocs: []structs.JobStatusesAlloc{},
	}
	for _, tg := range job.TaskGroups {
		if tg.Count != nil {
			out.GroupCountSum += *tg.Count
		}
	}
	if job.IsPeriodic() || job.IsParameterized() {
		out.ChildStatuses = children[id]
	}
	allocs, err := store.AllocsByJob(ws, job.Namespace, job.ID)
	if err != nil {
		return out, err
	}
	for _, a := range allocs {
		// Allocations of a job that was purged and registered again under the same ID are
		// not this job's.
		if a.Job != nil && a.Job.CreateIndex != job.CreateIndex {
			continue
		}
		entry := structs.JobStatusesAlloc{
			ID: a.ID, Group: a.TaskGroup, ClientStatus: a.ClientStatus, NodeID: a.NodeID,
			FollowupEvalID: a.FollowupEvalID,
		}
		if a.Job != nil {
			entry.JobVersion = a.Job.Version
		}
		if ds := a.DeploymentStatus; ds != nil {
			entry.DeploymentStatus = structs.JobStatusesDeployment{Canary: ds.Canary, Healthy: ds.Healthy}
		}
		out.Allocs = append(out.Allocs, entry)
	}
	d, err := store.LatestDeploymentByJob(ws, job.Namespace, job.ID)
	if err != nil {
		return out, err
	}
	if d != nil {
		autoPromote := len(d.TaskGroups) > 0
		for _, tg := range d.TaskGroups {
			autoPromote = autoPromote && tg.AutoPromote
		}
		out.LatestDeployment = &structs.JobStatusesLatestDeployment{
			ID: d.ID, IsActive: d.Active(), JobVersion: d.JobVersion, Status: d.Status,
			StatusDescription: d.StatusDescription, AllAutoPromote: autoPromote,
			RequiresPromotion: d.RequiresPromotion(),
		}
	}
	return out, nil
}
