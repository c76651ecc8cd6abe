package nomad

import (
	"time"

	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/structs"
)

// gcBatcher sends what a GC pass collects through Raft, at most size items an entry, so
// that no entry grows with the state; applied counts the items of the entries applied.
type gcBatcher[T any] struct {
	size    int
	send    func([]T) error
	batch   []T
	applied int
}

func (b *gcBatcher[T]) add(item T) error {
	b.batch = append(b.batch, item)
	if len(b.batch) < b.size {
		return nil
	}
	return b.flush()
}

// done sends what is left and answers how many items were applied in all.
func (b *gcBatcher[T]) done() (int, error) {
	err := b.flush()
	return b.applied, err
}

func (b *gcBatcher[T]) flush() error {
	if len(b.batch) == 0 {
		return nil
	}
	err := b.send(b.batch)
	if err == nil {
		b.applied += len(b.batch)
	}
	b.batch = nil
	return err
}

// jobGCBatch bounds the jobs removed by one Raft entry.
const jobGCBatch = 64

// jobGCEligible reports whether the GC may remove job at t. Only stopped jobs (and finished
// batch jobs) qualify; a service or system job scaled to zero is dead but kept, and a job with
// any tagged version is kept whatever its state. Every allocation must be finished on its
// client: removing the job removes its allocations, and a client would kill what still runs.
func jobGCEligible(job *structs.Job, versions []*structs.Job, allocs []*structs.Allocation, threshold time.Duration, t time.Time, force bool) bool {
	if job.Status != structs.JobStatusDead {
		return false
	}
	for _, a := range allocs {
		if !a.ClientTerminalStatus() {
			return false
		}
	}
	if job.IsPeriodic() || job.IsParameterized() {
		if !job.Stop {
			return false
		}
	} else if !job.Stop && job.Type != structs.JobTypeBatch && job.Type != structs.JobTypeSysBatch {
		return false
	}
	for _, v := range versions {
		if v.VersionTag != nil {
			return false
		}
	}
	if force {
		return true
	}
	return t.Sub(time.Unix(0, job.SubmitTime)) >= threshold
}

// runJobGC removes eligible jobs through Raft in batches, each removal with its purge record
// and a JobBatchDeregistered event whose actor is the job GC. forcedBy is who forced the run
// (nil when it is scheduled, or when ACLs are disabled): the records and events name it too,
// so a forced removal is traced to a token and not only to the GC.
func (s *Server) runJobGC(force bool, forcedBy *structs.Actor) (int, error) {
	store := s.State()
	jobs, err := store.Jobs(nil, structs.AllNamespacesSentinel, "")
	if err != nil {
		return 0, err
	}
	t := time.Now()
	b := gcBatcher[*structs.JobBatchDeregisterItem]{size: jobGCBatch, send: func(batch []*structs.JobBatchDeregisterItem) error {
		_, err := s.raftApply(structs.JobBatchDeregisterRequestType, &structs.JobBatchDeregisterRequest{
			Jobs: batch, PurgeTime: t.UnixNano(), Actor: structs.ActorJobGC, ForcedBy: forcedBy,
		})
		return err
	}}
	for _, job := range jobs {
		versions, err := store.JobVersionsByID(nil, job.Namespace, job.ID)
		if err != nil {
			return b.applied, err
		}
		allocs, err := store.AllocsByJob(nil, job.Namespace, job.ID)
		if err != nil {
			return b.applied, err
		}
		if !jobGCEligible(job, versions, allocs, s.config.JobGCThreshold, t, force) {
			continue
		}
		// A protected job is never collected, forced or not.
		if p, err := store.JobProtected(job.Namespace, job.ID); err != nil {
			return b.applied, err
		} else if p != nil {
			continue
		}
		id, err := uuid.GenerateUUID()
		if err != nil {
			return b.applied, err
		}
		if err := b.add(&structs.JobBatchDeregisterItem{Namespace: job.Namespace, JobID: job.ID, PurgeRecordID: id}); err != nil {
			return b.applied, err
		}
	}
	return b.done()
}

// evalGCBatch bounds the evaluations removed by one Raft entry, well under maxEvalDelete.
const evalGCBatch = 1024

// evalGCEligible reports whether the GC may remove eval at t. job is the evaluation's job
// (nil once purged or collected) and allocs are the allocations the evaluation placed. Only a
// finished evaluation qualifies, once it has been finished for threshold (any time, when
// forced), and only when every allocation it placed is finished too: the evaluation explains
// them. A batch job's evaluations stay with the job, as its allocations do (the job GC
// removes them together): they are the record of what ran.
func evalGCEligible(eval *structs.Evaluation, job *structs.Job, allocs []*structs.Allocation, threshold time.Duration, t time.Time, force bool) bool {
	if !eval.TerminalStatus() {
		return false
	}
	if job != nil && (job.Type == structs.JobTypeBatch || job.Type == structs.JobTypeSysBatch) {
		return false
	}
	for _, a := range allocs {
		if !a.TerminalStatus() {
			return false
		}
	}
	if force {
		return true
	}
	finished := eval.ModifyTime
	if finished == 0 {
		finished = eval.CreateTime
	}
	return t.Sub(time.Unix(0, finished)) >= threshold
}

// runEvalGC removes eligible evaluations through Raft in batches. Without it every
// evaluation ever made stays in the state (and in every snapshot), long after its job was
// purged: the servers' memory grows with the number of job changes.
func (s *Server) runEvalGC(force bool) (int, error) {
	store := s.State()
	evals, err := store.Evals(nil, structs.AllNamespacesSentinel, "")
	if err != nil {
		return 0, err
	}
	t := time.Now()
	b := gcBatcher[string]{size: evalGCBatch, send: func(batch []string) error {
		_, err := s.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: batch})
		return err
	}}
	for _, eval := range evals {
		if !eval.TerminalStatus() {
			continue
		}
		job, err := store.JobByID(nil, eval.Namespace, eval.JobID)
		if err != nil {
			return b.applied, err
		}
		allocs, err := store.AllocsByEval(nil, eval.ID)
		if err != nil {
			return b.applied, err
		}
		if !evalGCEligible(eval, job, allocs, s.config.EvalGCThreshold, t, force) {
			continue
		}
		if err := b.add(eval.ID); err != nil {
			return b.applied, err
		}
	}
	return b.done()
}

// allocGCBatch bounds the allocations removed by one Raft entry.
const allocGCBatch = 1024

// allocGCEligible reports whether the GC may remove allocation a of job (nil once purged) at
// t, while the job lives on. Only an allocation its client has finished qualifies, once it has
// been finished for threshold (any time, when forced), and not one the scheduler may still
// replace: its replacement takes over its reschedule history (replaced is
// scheduler.ReplacedAllocs of the job's allocations). A batch job's allocations stay with the
// job, as its evaluations do: they are the record of what ran, and the job GC removes them
// together. One of a deployment still in progress (activeDeployments holds the job's) stays
// too: the deployment's placed and unhealthy counts are recounted from its allocations.
func allocGCEligible(a *structs.Allocation, job *structs.Job, replaced, activeDeployments map[string]bool, threshold time.Duration, t time.Time, force bool) bool {
	if !a.ClientTerminalStatus() {
		return false
	}
	if job != nil && (job.Type == structs.JobTypeBatch || job.Type == structs.JobTypeSysBatch) {
		return false
	}
	if a.DeploymentID != "" && activeDeployments[a.DeploymentID] {
		return false
	}
	if !force {
		finished := a.ModifyTime
		if finished == 0 {
			finished = a.CreateTime
		}
		if t.Sub(time.Unix(0, finished)) < threshold {
			return false
		}
	}
	return !scheduler.MayReschedule(job, a, replaced, t)
}

// runAllocGC removes eligible allocations through Raft in batches. Without it a job that runs
// for months keeps every allocation it ever had (each new version and each rescheduled failure
// leaves some behind) in the state, in every snapshot and in its allocation list. It shares
// the evaluation GC's threshold, as upstream's evaluation GC collects them.
func (s *Server) runAllocGC(force bool) (int, error) {
	// One view for every decision: a job and its allocations as of one index.
	store := s.State().PointInTime()
	jobs, err := store.Jobs(nil, structs.AllNamespacesSentinel, "")
	if err != nil {
		return 0, err
	}
	t := time.Now()
	b := gcBatcher[string]{size: allocGCBatch, send: func(batch []string) error {
		_, err := s.raftApply(structs.AllocDeleteRequestType, &structs.AllocDeleteRequest{Allocs: batch})
		return err
	}}
	for _, job := range jobs {
		if job.Type == structs.JobTypeBatch || job.Type == structs.JobTypeSysBatch {
			continue
		}
		allocs, err := store.AllocsByJob(nil, job.Namespace, job.ID)
		if err != nil {
			return b.applied, err
		}
		replaced := scheduler.ReplacedAllocs(allocs)
		deployments, err := store.DeploymentsByJob(nil, job.Namespace, job.ID)
		if err != nil {
			return b.applied, err
		}
		active := map[string]bool{}
		for _, d := range deployments {
			if d.Active() {
				active[d.ID] = true
			}
		}
		// Oldest first: a failed allocation goes in the same entry as its replacement or an
		// earlier one, never after it. Were the replacement gone first, nothing would name
		// the failed one as replaced, and a scheduler run in between would replace it again.
		for i := len(allocs) - 1; i >= 0; i-- {
			a := allocs[i]
			if !allocGCEligible(a, job, replaced, active, s.config.EvalGCThreshold, t, force) {
				continue
			}
			if err := b.add(a.ID); err != nil {
				return b.applied, err
			}
		}
	}
	return b.done()
}

// nodeGCBatch bounds the nodes removed by one Raft entry.
const nodeGCBatch = 64

// nodeGCEligible reports whether the GC may remove node at t: it has been down for threshold
// (any time, when forced) and nothing on it still runs. Down nodes' allocations are lost, so
// this last check only guards a node whose client answered again in between.
func nodeGCEligible(node *structs.Node, allocs []*structs.Allocation, threshold time.Duration, t time.Time, force bool) bool {
	if node.Status != structs.NodeStatusDown {
		return false
	}
	for _, a := range allocs {
		if !a.ClientTerminalStatus() {
			return false
		}
	}
	return force || t.Sub(time.Unix(node.StatusUpdatedAt, 0)) >= threshold
}

// runNodeGC removes eligible down nodes through Raft (NodeDeregistration events), in batches.
func (s *Server) runNodeGC(force bool) (int, error) {
	store := s.State()
	nodes, err := store.Nodes(nil, "")
	if err != nil {
		return 0, err
	}
	t := time.Now()
	b := gcBatcher[string]{size: nodeGCBatch, send: func(batch []string) error {
		_, err := s.raftApply(structs.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeIDs: batch, UpdatedAt: t.UnixNano()})
		if err == nil {
			for _, id := range batch {
				s.clearHeartbeat(id)
			}
		}
		return err
	}}
	for _, n := range nodes {
		allocs, err := store.AllocsByNode(nil, n.ID)
		if err != nil {
			return b.applied, err
		}
		if !nodeGCEligible(n, allocs, s.config.NodeGCThreshold, t, force) {
			continue
		}
		if err := b.add(n.ID); err != nil {
			return b.applied, err
		}
	}
	return b.done()
}

// System is the endpoint of cluster-wide operations.
type System struct {
	srv *Server
}

// systemGarbageCollect forces a job GC, a node GC, an evaluation GC and an allocation GC now,
// ignoring their thresholds but keeping tagged and scaled-to-zero jobs, nodes that are not
// down, evaluations whose allocations still run, and allocations that still run or may still
// be rescheduled. Management only; the
// forcing token is named in the purge records and events.
var systemGarbageCollect = write("System.GarbageCollect", spec[structs.WriteRequest, structs.GenericResponse]{
	Authorize: management[structs.WriteRequest]("force garbage collection"),
	Serve: func(c *rpcCall, _ *structs.WriteRequest, reply *structs.GenericResponse) error {
		if _, err := c.srv.runJobGC(true, c.actor); err != nil {
			return err
		}
		if _, err := c.srv.runNodeGC(true); err != nil {
			return err
		}
		if _, err := c.srv.runEvalGC(true); err != nil {
			return err
		}
		if _, err := c.srv.runAllocGC(true); err != nil {
			return err
		}
		reply.Index = c.srv.State().LatestIndex()
		return nil
	},
})

// systemReconcileSummaries recounts every job's summary from its allocations, through Raft.
// Management only, as upstream.
var systemReconcileSummaries = write("System.ReconcileSummaries", spec[structs.ReconcileJobSummariesRequest, structs.GenericResponse]{
	Authorize: management[structs.ReconcileJobSummariesRequest]("reconcile job summaries"),
	Fix:       func(c *rpcCall, req *structs.ReconcileJobSummariesRequest) { req.Actor = c.actor },
	Message:   structs.ReconcileJobSummariesRequestType,
})

// GarbageCollect forces the job, node, evaluation and allocation GCs now.
func (sys *System) GarbageCollect(args *structs.WriteRequest, reply *structs.GenericResponse) error {
	return systemGarbageCollect.Call(sys.srv, args, reply)
}

// ReconcileSummaries recounts every job's summary from its allocations.
func (sys *System) ReconcileSummaries(args *structs.ReconcileJobSummariesRequest, reply *structs.GenericResponse) error {
	return systemReconcileSummaries.Call(sys.srv, args, reply)
}
