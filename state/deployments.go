package state

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// Deployments are written by the plan that places a job version (ApplyPlanResultsTxn), by the
// deployment watcher and operators (status, promotion, health), and recounted from the
// allocations that carry their ID in every transaction that changes those allocations, so
// the counts a reader sees always match the allocations of the same index.

// upsertDeploymentTxn writes a deployment at the transaction's index.
func (s *StateStore) upsertDeploymentTxn(txn *Txn, d *structs.Deployment) error {
	existing, err := deploymentByIDTxn(txn.Txn, nil, d.ID)
	if err != nil {
		return err
	}
	if existing != nil {
		d.CreateIndex = existing.CreateIndex
		if d.CreateTime == 0 {
			d.CreateTime = existing.CreateTime
		}
	} else {
		d.CreateIndex = txn.Index
	}
	d.ModifyIndex = txn.Index
	if err := txn.Insert(tableDeployments, d); err != nil {
		return fmt.Errorf("state: deployment insert: %w", err)
	}
	return txn.bumpIndex(tableDeployments)
}

// updateDeploymentStatusTxn applies a status change; a successful deployment makes its job
// version stable.
func (s *StateStore) updateDeploymentStatusTxn(txn *Txn, u *structs.DeploymentStatusUpdate, updatedAt int64) error {
	d, err := deploymentByIDTxn(txn.Txn, nil, u.DeploymentID)
	if err != nil {
		return err
	}
	if d == nil {
		return structs.NotFound(structs.ErrDeploymentNotFound)
	}
	c := d.Copy()
	c.Status, c.StatusDescription, c.ModifyTime = u.Status, u.StatusDescription, updatedAt
	if err := s.upsertDeploymentTxn(txn, c); err != nil {
		return err
	}
	if c.Status == structs.DeploymentStatusSuccessful {
		return s.setJobStableTxn(txn, c.Namespace, c.JobID, c.JobVersion, c.JobCreateIndex)
	}
	return nil
}

// SetJobStabilityTxn marks a version of a job stable or not, on its version row and, when it
// is the current version, on the job. A missing job or version is a 404.
func (s *StateStore) SetJobStabilityTxn(txn *Txn, namespace, id string, version uint64, stable bool) error {
	job, err := existingJobTxn(txn, namespace, id)
	if err != nil {
		return err
	}
	v, err := first[*structs.Job](txn.Txn, nil, "job version lookup", tableJobVersion, indexID, namespace, id, version)
	if err != nil {
		return err
	}
	if v == nil {
		return structs.NewErrCode(http.StatusNotFound, "job %q at version %d not found", id, version)
	}
	return s.writeJobStabilityTxn(txn, job, v, version, stable)
}

// setJobStableTxn marks a version of a job stable after a successful deployment. The job may
// have been purged or re-registered since, or the version pruned: that is not an error.
func (s *StateStore) setJobStableTxn(txn *Txn, namespace, id string, version, createIndex uint64) error {
	job, err := jobByIDTxn(txn.Txn, nil, namespace, id)
	if err != nil || job == nil || job.CreateIndex != createIndex {
		return err
	}
	v, err := first[*structs.Job](txn.Txn, nil, "job version lookup", tableJobVersion, indexID, namespace, id, version)
	if err != nil {
		return err
	}
	return s.writeJobStabilityTxn(txn, job, v, version, true)
}

// writeJobStabilityTxn writes stable on the version row v (nil when it is no longer kept) and,
// when version is the job's current one, on the job.
func (s *StateStore) writeJobStabilityTxn(txn *Txn, job, v *structs.Job, version uint64, stable bool) error {
	if v != nil && v.Stable != stable {
		c := v.Copy()
		c.Stable = stable
		if err := txn.Insert(tableJobVersion, c); err != nil {
			return fmt.Errorf("state: job version insert: %w", err)
		}
		if err := txn.bumpIndex(tableJobVersion); err != nil {
			return err
		}
	}
	if job.Version != version || job.Stable == stable {
		return nil
	}
	current := job.Copy()
	current.Stable = stable
	current.ModifyIndex = txn.Index
	if err := txn.Insert(tableJobs, current); err != nil {
		return fmt.Errorf("state: job insert: %w", err)
	}
	return txn.bumpIndex(tableJobs)
}

// recountDeploymentsTxn derives the allocation counts of each deployment from the allocations
// that carry its ID; a deployment whose counts are unchanged is not written.
func (s *StateStore) recountDeploymentsTxn(txn *Txn, ids map[string]bool) error {
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		if id != "" {
			sorted = append(sorted, id)
		}
	}
	sort.Strings(sorted) // the FSM writes in the same order on every server
	for _, id := range sorted {
		d, err := deploymentByIDTxn(txn.Txn, nil, id)
		if err != nil {
			return err
		}
		if d == nil {
			continue
		}
		allocs, err := allocsBy(txn.Txn, nil, "allocs of deployment", indexDeployment, id)
		if err != nil {
			return err
		}
		c := d.Copy()
		for _, st := range c.TaskGroups {
			st.PlacedAllocs, st.HealthyAllocs, st.UnhealthyAllocs = 0, 0, 0
		}
		for _, a := range allocs {
			st := c.TaskGroups[a.TaskGroup]
			if st == nil {
				continue
			}
			st.PlacedAllocs++
			if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil {
				if *ds.Healthy {
					st.HealthyAllocs++
				} else {
					st.UnhealthyAllocs++
				}
			}
			if ds := a.DeploymentStatus; ds != nil && ds.Canary && !slices.Contains(st.PlacedCanaries, a.ID) {
				st.PlacedCanaries = append(st.PlacedCanaries, a.ID)
			}
		}
		if reflect.DeepEqual(c.TaskGroups, d.TaskGroups) {
			continue
		}
		if err := s.upsertDeploymentTxn(txn, c); err != nil {
			return err
		}
	}
	return nil
}

// ApplyDeploymentStatusUpdate changes a deployment's status, with the evaluation it calls for
// and, for an automatic revert, the job version registered again.
func (s *StateStore) ApplyDeploymentStatusUpdate(index uint64, req *structs.DeploymentStatusUpdateRequest) error {
	return s.apply(structs.DeploymentStatusUpdateRequestType, index, nil, func(txn *Txn) error {
		if err := s.updateDeploymentStatusTxn(txn, req.DeploymentUpdate, req.UpdatedAt); err != nil {
			return err
		}
		return s.revertAndEvalTxn(txn, req.Job, req.Eval)
	})
}

// revertAndEvalTxn registers job (a revert) when set and writes eval when set.
func (s *StateStore) revertAndEvalTxn(txn *Txn, job *structs.Job, eval *structs.Evaluation) error {
	if job != nil {
		if err := s.UpsertJobTxn(txn, job); err != nil {
			return err
		}
	}
	if eval == nil {
		return nil
	}
	if job != nil {
		eval.JobModifyIndex = job.JobModifyIndex
	}
	return s.UpsertEvalsTxn(txn, []*structs.Evaluation{eval})
}

// ApplyDeploymentPromotion promotes the canaries of the named groups (every group that has
// canaries with All). A group whose canaries are not all healthy refuses the promotion;
// promoted canaries become ordinary allocations of the deployment.
func (s *StateStore) ApplyDeploymentPromotion(index uint64, req *structs.DeploymentPromoteRequest) error {
	txn := s.WriteTxn(structs.DeploymentPromoteRequestType, index, nil)
	defer txn.Abort()
	d, err := existingDeploymentTxn(txn, req.DeploymentID)
	if err != nil {
		return err
	}
	if !d.Active() {
		return structs.BadRequest("can't promote terminal deployment %s (status %s)", d.ID, d.Status)
	}
	groups := map[string]bool{}
	for _, g := range req.Groups {
		groups[g] = true
	}
	c := d.Copy()
	names := make([]string, 0, len(c.TaskGroups))
	for name := range c.TaskGroups {
		names = append(names, name)
	}
	sort.Strings(names)
	var promote []string
	for _, name := range names {
		st := c.TaskGroups[name]
		if !req.All && !groups[name] {
			continue
		}
		delete(groups, name)
		if st.DesiredCanaries == 0 || st.Promoted {
			continue
		}
		healthy := 0
		for _, id := range st.PlacedCanaries {
			a, err := allocByIDTxn(txn.Txn, nil, id)
			if err != nil {
				return err
			}
			if a != nil && a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy {
				healthy++
			}
		}
		if healthy < st.DesiredCanaries {
			return structs.BadRequest("Task group %q has %d/%d healthy allocations", name, healthy, st.DesiredCanaries)
		}
		st.Promoted = true
		promote = append(promote, st.PlacedCanaries...)
	}
	for name := range groups {
		return structs.BadRequest("Deployment does not include task group %q", name)
	}
	if len(promote) == 0 {
		return structs.BadRequest("no canaries to promote")
	}
	c.ModifyTime = req.UpdatedAt
	if c.Status == structs.DeploymentStatusRunning && !c.RequiresPromotion() {
		c.StatusDescription = structs.DeploymentDescRunning
	}
	if err := s.upsertDeploymentTxn(txn, c); err != nil {
		return err
	}
	changed := false
	for _, id := range promote {
		a, err := allocByIDTxn(txn.Txn, nil, id)
		if err != nil {
			return err
		}
		if a == nil || a.DeploymentStatus == nil || !a.DeploymentStatus.Canary {
			continue
		}
		u := a.Copy()
		ds := *a.DeploymentStatus
		ds.Canary = false
		ds.ModifyIndex = txn.Index
		u.DeploymentStatus = &ds
		u.ModifyIndex, u.ModifyTime = txn.Index, req.UpdatedAt
		if err := txn.Insert(tableAllocs, u); err != nil {
			return fmt.Errorf("state: alloc promote: %w", err)
		}
		changed = true
	}
	if changed {
		if err := txn.bumpIndex(tableAllocs); err != nil {
			return err
		}
	}
	if err := s.revertAndEvalTxn(txn, nil, req.Eval); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// ApplyDeploymentAllocHealth sets the health of allocations of a deployment by hand.
func (s *StateStore) ApplyDeploymentAllocHealth(index uint64, req *structs.DeploymentAllocHealthRequest) error {
	txn := s.WriteTxn(structs.DeploymentAllocHealthRequestType, index, nil)
	defer txn.Abort()
	d, err := existingDeploymentTxn(txn, req.DeploymentID)
	if err != nil {
		return err
	}
	ts := time.Unix(0, req.Timestamp).UTC()
	var allocs []*structs.Allocation
	for _, set := range []struct {
		ids     []string
		healthy bool
	}{{req.HealthyAllocationIDs, true}, {req.UnhealthyAllocationIDs, false}} {
		for _, id := range set.ids {
			a, err := allocByIDTxn(txn.Txn, nil, id)
			if err != nil {
				return err
			}
			if a == nil || a.DeploymentID != d.ID {
				return structs.BadRequest("Allocation %q is not part of deployment %s", id, d.ID)
			}
			u := a.Copy()
			u.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &set.healthy, Timestamp: ts, ModifyIndex: txn.Index}
			if a.DeploymentStatus != nil {
				u.DeploymentStatus.Canary = a.DeploymentStatus.Canary
			}
			allocs = append(allocs, u)
		}
	}
	if err := s.setAllocHealthTxn(txn, allocs, req.UpdatedAt); err != nil {
		return err
	}
	if req.DeploymentUpdate != nil {
		if err := s.updateDeploymentStatusTxn(txn, req.DeploymentUpdate, req.UpdatedAt); err != nil {
			return err
		}
	}
	if err := s.revertAndEvalTxn(txn, req.Job, req.Eval); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// setAllocHealthTxn writes allocations whose DeploymentStatus changed, moves their
// deployments' progress deadlines on for each healthy one, and recounts the deployments.
func (s *StateStore) setAllocHealthTxn(txn *Txn, allocs []*structs.Allocation, updatedAt int64) error {
	ids := map[string]bool{}
	for _, a := range allocs {
		a.ModifyIndex, a.ModifyTime = txn.Index, updatedAt
		if err := txn.Insert(tableAllocs, a); err != nil {
			return fmt.Errorf("state: alloc health: %w", err)
		}
		ids[a.DeploymentID] = true
		if err := s.moveProgressDeadlineTxn(txn, a); err != nil {
			return err
		}
	}
	if len(allocs) == 0 {
		return nil
	}
	if err := txn.bumpIndex(tableAllocs); err != nil {
		return err
	}
	return s.recountDeploymentsTxn(txn, ids)
}

// moveProgressDeadlineTxn gives a deployment's group until the allocation's health time plus
// its progress deadline to make more progress, when the allocation is healthy.
func (s *StateStore) moveProgressDeadlineTxn(txn *Txn, a *structs.Allocation) error {
	ds := a.DeploymentStatus
	if ds == nil || ds.Healthy == nil || !*ds.Healthy || a.DeploymentID == "" {
		return nil
	}
	d, err := deploymentByIDTxn(txn.Txn, nil, a.DeploymentID)
	if err != nil || d == nil {
		return err
	}
	st := d.TaskGroups[a.TaskGroup]
	if st == nil || st.ProgressDeadline == 0 {
		return nil
	}
	by := ds.Timestamp.Add(st.ProgressDeadline)
	if !by.After(st.RequireProgressBy) {
		return nil
	}
	c := d.Copy()
	c.TaskGroups[a.TaskGroup].RequireProgressBy = by
	return s.upsertDeploymentTxn(txn, c)
}

// deleteJobDeploymentsTxn removes the deployments of a purged job.
func (s *StateStore) deleteJobDeploymentsTxn(txn *Txn, namespace, id string) error {
	ds, err := deploymentsByJobTxn(txn.Txn, nil, namespace, id)
	if err != nil {
		return err
	}
	return deleteRows(txn, "deployment", tableDeployments, ds)
}

// DeploymentByID reads one deployment; nil when unknown.
func (s *StateStore) DeploymentByID(ws memdb.WatchSet, id string) (*structs.Deployment, error) {
	return deploymentByIDTxn(s.db.Txn(false), ws, id)
}

// existingDeploymentTxn reads the deployment a write acts on; a missing one is a 404.
func existingDeploymentTxn(txn *Txn, id string) (*structs.Deployment, error) {
	d, err := deploymentByIDTxn(txn.Txn, nil, id)
	if err == nil && d == nil {
		err = structs.NotFound(structs.ErrDeploymentNotFound)
	}
	return d, err
}

func deploymentByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.Deployment, error) {
	return first[*structs.Deployment](txn, ws, "deployment lookup", tableDeployments, indexID, id)
}

// DeploymentsByJob lists a job's deployments, newest first.
func (s *StateStore) DeploymentsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Deployment, error) {
	return deploymentsByJobTxn(s.db.Txn(false), ws, namespace, jobID)
}

func deploymentsByJobTxn(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) ([]*structs.Deployment, error) {
	return deploymentsBy(txn, ws, "deployments of job", indexJob, namespace, jobID)
}

// LatestDeploymentByJob is the job's newest deployment; nil when it has none.
func (s *StateStore) LatestDeploymentByJob(ws memdb.WatchSet, namespace, jobID string) (*structs.Deployment, error) {
	ds, err := s.DeploymentsByJob(ws, namespace, jobID)
	if err != nil || len(ds) == 0 {
		return nil, err
	}
	return ds[0], nil
}

// Deployments lists deployments in namespace ("*" for all) whose ID starts with prefix, newest
// first.
func (s *StateStore) Deployments(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Deployment, error) {
	all, err := deploymentsBy(s.db.Txn(false), ws, "deployment list", indexID+"_prefix", prefix)
	if err != nil {
		return nil, err
	}
	return inNamespace(all, namespace, func(d *structs.Deployment) string { return d.Namespace }), nil
}

// AllocsByDeployment lists the allocations of a deployment, newest first.
func (s *StateStore) AllocsByDeployment(ws memdb.WatchSet, id string) ([]*structs.Allocation, error) {
	return allocsBy(s.db.Txn(false), ws, "allocs of deployment", indexDeployment, id)
}

func deploymentsBy(txn *memdb.Txn, ws memdb.WatchSet, what, index string, args ...any) ([]*structs.Deployment, error) {
	out, err := list[*structs.Deployment](txn, ws, what, tableDeployments, index, args...)
	newestFirst(out, func(d *structs.Deployment) uint64 { return d.CreateIndex }, func(d *structs.Deployment) string { return d.ID })
	return out, err
}
