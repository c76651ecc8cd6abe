package state

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// deploymentEventView keeps what the deployment tests assert on.
type deploymentEventView struct {
	ID, Status string
	Healthy    int
	Promoted   bool
}

func deploymentEventsOf(got []*structs.Events) []structs.Event {
	var out []structs.Event
	for _, batch := range got {
		for _, e := range batch.Events {
			if e.Topic != structs.TopicDeployment {
				continue
			}
			d := e.Payload.(*structs.DeploymentEvent).Deployment
			st := d.TaskGroups["web"]
			e.Payload = deploymentEventView{ID: d.ID, Status: d.Status, Healthy: st.HealthyAllocs, Promoted: st.Promoted}
			out = append(out, e)
		}
	}
	return out
}

func mockDeployment(id string, job *structs.Job, canaries int) *structs.Deployment {
	return &structs.Deployment{
		ID: id, Namespace: job.Namespace, JobID: job.ID, JobVersion: job.Version, JobCreateIndex: job.CreateIndex,
		JobModifyIndex: job.JobModifyIndex, JobSpecModifyIndex: job.JobModifyIndex,
		Status: structs.DeploymentStatusRunning, StatusDescription: structs.DeploymentDescRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {
			DesiredTotal: 2, DesiredCanaries: canaries, ProgressDeadline: 10 * time.Minute,
			RequireProgressBy: time.Unix(1000, 0).UTC(),
		}},
	}
}

func placedIn(d *structs.Deployment, canary bool, ids ...string) []*structs.Allocation {
	var out []*structs.Allocation
	for i, id := range ids {
		a := &structs.Allocation{ID: id, Namespace: d.Namespace, JobID: d.JobID, TaskGroup: "web", NodeID: "node-1",
			Name: structs.AllocName(d.JobID, "web", i), DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusPending, DeploymentID: d.ID}
		if canary {
			a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
		}
		out = append(out, a)
	}
	return out
}

// health reports allocations' health as a client does, in its alloc update.
func health(s *StateStore, index uint64, deploymentID string, healthy bool, at time.Time, ids ...string) error {
	var allocs []*structs.Allocation
	for _, id := range ids {
		allocs = append(allocs, &structs.Allocation{ID: id, DeploymentID: deploymentID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: new(healthy), Timestamp: at}})
	}
	// From the node the allocations run on (a report from any other is ignored).
	var nodeID string
	if len(ids) > 0 {
		if a, err := s.AllocByID(nil, ids[0]); err == nil && a != nil {
			nodeID = a.NodeID
		}
	}
	return applyTxn(s, structs.AllocClientUpdateRequestType, index, nil, func(txn *Txn) error {
		return s.UpdateAllocsFromClientTxn(txn, nodeID, allocs, int64(index))
	})
}

func TestDeployments_RollingLifecycle(t *testing.T) {
	s := testStateStore(t)
	must.NoError(t, registerWeb(s))
	job, err := s.JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	got := captureEvents(s)

	d := mockDeployment("dep-1", job, 0)
	mustApply(t, s, structs.ApplyPlanResultsRequestType, 11, nil, func(txn *Txn) error {
		return s.ApplyPlanResultsTxn(txn, &structs.ApplyPlanResultsRequest{Job: job, Deployment: d,
			AllocsPlaced: placedIn(d, false, "a1", "a2"), UpdatedAt: 11})
	})
	stored, err := s.DeploymentByID(nil, "dep-1")
	must.NoError(t, err)
	must.Eq(t, 11, stored.CreateIndex)
	must.Eq(t, 2, stored.TaskGroups["web"].PlacedAllocs)
	byJob, err := s.DeploymentsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Len(t, 1, byJob)

	// One healthy allocation: counted, and the progress deadline moves to its health time
	// plus the group's progress_deadline.
	healthyAt := time.Unix(5000, 0).UTC()
	must.NoError(t, health(s, 12, "dep-1", true, healthyAt, "a1"))
	stored, _ = s.DeploymentByID(nil, "dep-1")
	must.Eq(t, 1, stored.TaskGroups["web"].HealthyAllocs)
	must.Eq(t, healthyAt.Add(10*time.Minute), stored.TaskGroups["web"].RequireProgressBy)
	a1, _ := s.AllocByID(nil, "a1")
	must.True(t, *a1.DeploymentStatus.Healthy)
	must.Eq(t, 12, a1.DeploymentStatus.ModifyIndex)

	// The first verdict stands: a later report does not flip it, and a report naming another
	// deployment is not taken.
	must.NoError(t, health(s, 13, "dep-1", false, healthyAt, "a1"))
	must.NoError(t, health(s, 14, "dep-other", true, healthyAt, "a2"))
	stored, _ = s.DeploymentByID(nil, "dep-1")
	must.Eq(t, 1, stored.TaskGroups["web"].HealthyAllocs)
	must.Eq(t, 0, stored.TaskGroups["web"].UnhealthyAllocs)

	must.NoError(t, s.ApplyDeploymentStatusUpdate(15, &structs.DeploymentStatusUpdateRequest{UpdatedAt: 15,
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "dep-1", Status: structs.DeploymentStatusSuccessful,
			StatusDescription: structs.DeploymentDescSuccessful}}))
	job, _ = s.JobByID(nil, structs.DefaultNamespace, "web")
	must.True(t, job.Stable, must.Sprint("a successful deployment makes its version stable"))
	v0, _ := s.JobByIDAndVersion(nil, structs.DefaultNamespace, "web", 0)
	must.True(t, v0.Stable)

	must.Eq(t, []structs.Event{
		{Topic: structs.TopicDeployment, Type: "PlanResult", Key: "dep-1", Namespace: "default", FilterKeys: []string{"web"}, Index: 11,
			Payload: deploymentEventView{ID: "dep-1", Status: "running"}},
		{Topic: structs.TopicDeployment, Type: "AllocationUpdated", Key: "dep-1", Namespace: "default", FilterKeys: []string{"web"}, Index: 12,
			Payload: deploymentEventView{ID: "dep-1", Status: "running", Healthy: 1}},
		{Topic: structs.TopicDeployment, Type: "DeploymentStatusUpdate", Key: "dep-1", Namespace: "default", FilterKeys: []string{"web"}, Index: 15,
			Payload: deploymentEventView{ID: "dep-1", Status: "successful", Healthy: 1}},
	}, deploymentEventsOf(*got))

	// A purge takes the job's deployments with it.
	must.NoError(t, applyPurge(s, 16, actorAlice, structs.DefaultNamespace, "web", "rec-1", nil))
	stored, err = s.DeploymentByID(nil, "dep-1")
	must.NoError(t, err)
	must.Nil(t, stored)
}

func TestDeployments_Promotion(t *testing.T) {
	cases := []struct {
		name     string
		healthy  bool
		req      structs.DeploymentPromoteRequest
		wantErr  string
		promoted bool
	}{
		{name: "unhealthy canary refuses", healthy: false, req: structs.DeploymentPromoteRequest{All: true},
			wantErr: `Task group "web" has 0/1 healthy allocations`},
		{name: "unknown group refuses", healthy: true, req: structs.DeploymentPromoteRequest{Groups: []string{"db"}},
			wantErr: `Deployment does not include task group "db"`},
		{name: "all", healthy: true, req: structs.DeploymentPromoteRequest{All: true}, promoted: true},
		{name: "named group", healthy: true, req: structs.DeploymentPromoteRequest{Groups: []string{"web"}}, promoted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			must.NoError(t, registerWeb(s))
			job, _ := s.JobByID(nil, structs.DefaultNamespace, "web")
			d := mockDeployment("dep-1", job, 1)
			d.StatusDescription = structs.DeploymentDescRunningNeedsPromotion
			mustApply(t, s, structs.ApplyPlanResultsRequestType, 11, nil, func(txn *Txn) error {
				return s.ApplyPlanResultsTxn(txn, &structs.ApplyPlanResultsRequest{Job: job, Deployment: d,
					AllocsPlaced: placedIn(d, true, "c1"), UpdatedAt: 11})
			})
			if tc.healthy {
				must.NoError(t, s.ApplyDeploymentAllocHealth(12, &structs.DeploymentAllocHealthRequest{
					DeploymentID: "dep-1", HealthyAllocationIDs: []string{"c1"}, Timestamp: 12, UpdatedAt: 12}))
			}
			got := captureEvents(s)
			tc.req.DeploymentID = "dep-1"
			tc.req.UpdatedAt = 13
			before := s.Index(tableDeployments)
			err := s.ApplyDeploymentPromotion(13, &tc.req)
			stored, _ := s.DeploymentByID(nil, "dep-1")
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				must.Eq(t, 400, structs.ErrorCode(err))
				must.Eq(t, before, s.Index(tableDeployments), must.Sprint("a refused promotion writes nothing"))
				must.Len(t, 0, *got)
				return
			}
			must.NoError(t, err)
			must.True(t, stored.TaskGroups["web"].Promoted)
			must.Eq(t, []string{"c1"}, stored.TaskGroups["web"].PlacedCanaries)
			must.Eq(t, structs.DeploymentDescRunning, stored.StatusDescription)
			c1, _ := s.AllocByID(nil, "c1")
			must.False(t, c1.DeploymentStatus.Canary, must.Sprint("a promoted canary is an ordinary allocation"))
			must.True(t, *c1.DeploymentStatus.Healthy)
			events := deploymentEventsOf(*got)
			must.Len(t, 1, events)
			must.Eq(t, "DeploymentPromotion", events[0].Type)
		})
	}
}

func TestDeployments_AllocHealthRefusesForeignAllocs(t *testing.T) {
	s := testStateStore(t)
	must.NoError(t, registerWeb(s))
	job, _ := s.JobByID(nil, structs.DefaultNamespace, "web")
	d := mockDeployment("dep-1", job, 0)
	mustApply(t, s, structs.ApplyPlanResultsRequestType, 11, nil, func(txn *Txn) error {
		return s.ApplyPlanResultsTxn(txn, &structs.ApplyPlanResultsRequest{Job: job, Deployment: d,
			AllocsPlaced: placedIn(d, false, "a1"), UpdatedAt: 11})
	})
	err := s.ApplyDeploymentAllocHealth(12, &structs.DeploymentAllocHealthRequest{
		DeploymentID: "dep-1", UnhealthyAllocationIDs: []string{"nope"}, Timestamp: 12})
	must.ErrorContains(t, err, `Allocation "nope" is not part of deployment dep-1`)
	err = s.ApplyDeploymentAllocHealth(12, &structs.DeploymentAllocHealthRequest{DeploymentID: "missing"})
	must.Eq(t, 404, structs.ErrorCode(err))

	got := captureEvents(s)
	must.NoError(t, s.ApplyDeploymentAllocHealth(13, &structs.DeploymentAllocHealthRequest{
		DeploymentID: "dep-1", UnhealthyAllocationIDs: []string{"a1"}, Timestamp: 13,
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "dep-1", Status: structs.DeploymentStatusFailed,
			StatusDescription: structs.DeploymentDescFailedAllocations}}))
	stored, _ := s.DeploymentByID(nil, "dep-1")
	must.Eq(t, structs.DeploymentStatusFailed, stored.Status)
	must.Eq(t, 1, stored.TaskGroups["web"].UnhealthyAllocs)
	job, _ = s.JobByID(nil, structs.DefaultNamespace, "web")
	must.False(t, job.Stable)
	must.Eq(t, []structs.Event{
		{Topic: structs.TopicDeployment, Type: "DeploymentAllocHealth", Key: "dep-1", Namespace: "default", FilterKeys: []string{"web"}, Index: 13,
			Payload: deploymentEventView{ID: "dep-1", Status: "failed"}},
	}, deploymentEventsOf(*got))
	allocEvents := 0
	for _, batch := range *got {
		for _, e := range batch.Events {
			if e.Topic == structs.TopicAllocation {
				allocEvents++
				must.Eq(t, "DeploymentAllocHealth", e.Type)
			}
		}
	}
	must.Eq(t, 1, allocEvents)
}
