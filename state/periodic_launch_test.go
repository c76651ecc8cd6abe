package state

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func periodicParent(id string) *structs.Job {
	j := mockJob(id)
	j.Type = structs.JobTypeBatch
	j.Periodic = &api.PeriodicConfig{Spec: ptrOf("*/5 * * * *")}
	return j
}

func launchReq(parent *structs.Job, at time.Time) *structs.JobRegisterRequest {
	return &structs.JobRegisterRequest{Job: parent.PeriodicChild(at),
		PeriodicLaunch: &structs.PeriodicLaunch{Namespace: parent.Namespace, ID: parent.ID, Launch: at}}
}

func TestPeriodicLaunch_OnlyMovesForward(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		second    time.Time
		wantErr   bool
		wantLast  time.Time
		wantChild string
	}{
		{name: "later launch recorded", second: t0.Add(5 * time.Minute), wantLast: t0.Add(5 * time.Minute), wantChild: "cron/periodic-1772359500"},
		{name: "same launch refused", second: t0, wantErr: true, wantLast: t0},
		{name: "earlier launch refused", second: t0.Add(-5 * time.Minute), wantErr: true, wantLast: t0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			parent := periodicParent("cron")
			upsertJob(t, s, 10, parent)
			must.NoError(t, s.ApplyJobRegister(11, launchReq(parent, t0)))

			err := s.ApplyJobRegister(12, launchReq(parent, tc.second))
			if tc.wantErr {
				must.ErrorIs(t, err, structs.ErrPeriodicLaunched)
			} else {
				must.NoError(t, err)
				child, err := s.JobByID(nil, structs.DefaultNamespace, tc.wantChild)
				must.NoError(t, err)
				must.NotNil(t, child)
				must.Eq(t, "cron", child.ParentID)
			}
			got, err := s.PeriodicLaunchByID(nil, structs.DefaultNamespace, "cron")
			must.NoError(t, err)
			must.Eq(t, tc.wantLast, got.Launch)
			must.Eq(t, 11, got.CreateIndex)
			// A refused launch stores nothing: no child of its time either.
			if tc.wantErr {
				jobs, err := s.Jobs(nil, structs.DefaultNamespace, "cron/")
				must.NoError(t, err)
				must.Len(t, 1, jobs)
			}
		})
	}
}

func TestPeriodicLaunch_PurgeForgetsIt(t *testing.T) {
	s := testStateStore(t)
	parent := periodicParent("cron")
	upsertJob(t, s, 10, parent)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	must.NoError(t, s.ApplyJobRegister(11, launchReq(parent, t0)))

	// A stop keeps the launch (a restarted job does not relaunch what it launched).
	must.NoError(t, applyStop(s, 12, nil, structs.DefaultNamespace, "cron", nil))
	got, err := s.PeriodicLaunchByID(nil, structs.DefaultNamespace, "cron")
	must.NoError(t, err)
	must.NotNil(t, got)

	must.NoError(t, applyPurge(s, 13, nil, structs.DefaultNamespace, "cron", "rec-1", nil))
	got, err = s.PeriodicLaunchByID(nil, structs.DefaultNamespace, "cron")
	must.NoError(t, err)
	must.Nil(t, got)
}

func TestChildrenSummary_FollowsChildren(t *testing.T) {
	s := testStateStore(t)
	parent := periodicParent("cron")
	upsertJob(t, s, 10, parent)
	children := func() structs.JobChildrenSummary {
		t.Helper()
		sum, err := s.JobSummaryByID(nil, structs.DefaultNamespace, "cron")
		must.NoError(t, err)
		must.NotNil(t, sum.Children)
		return *sum.Children
	}
	must.Eq(t, structs.JobChildrenSummary{}, children())

	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	first := launchReq(parent, t0)
	first.Eval = mockEval("eval-1", first.Job, structs.EvalTriggerPeriodicJob)
	must.NoError(t, s.ApplyJobRegister(11, first))
	must.Eq(t, structs.JobChildrenSummary{Pending: 1}, children())
	must.NoError(t, s.ApplyJobRegister(12, launchReq(parent, t0.Add(5*time.Minute))))
	must.Eq(t, structs.JobChildrenSummary{Pending: 2}, children())

	// The first child's evaluation completes without placing anything: it is dead.
	done := mockEval("eval-1", first.Job, structs.EvalTriggerPeriodicJob)
	done.Status = structs.EvalStatusComplete
	mustApply(t, s, structs.EvalUpdateRequestType, 13, nil, func(txn *Txn) error {
		return s.UpsertEvalsTxn(txn, []*structs.Evaluation{done})
	})
	must.Eq(t, structs.JobChildrenSummary{Pending: 1, Dead: 1}, children())

	// A purged child is no longer counted.
	must.NoError(t, applyPurge(s, 14, nil, structs.DefaultNamespace, first.Job.ID, "rec-1", nil))
	must.Eq(t, structs.JobChildrenSummary{Pending: 1}, children())
}

func TestDispatchToken_OneLiveChildPerToken(t *testing.T) {
	s := testStateStore(t)
	parent := mockJob("tmpl")
	parent.Type = structs.JobTypeBatch
	parent.ParameterizedJob = &api.ParameterizedJobConfig{}
	upsertJob(t, s, 10, parent)
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	dispatch := func(index uint64, suffix, token string) error {
		child := parent.DispatchChild(structs.DispatchedID("tmpl", "", at.Unix(), suffix), at, nil, nil, token)
		return s.ApplyJobRegister(index, &structs.JobRegisterRequest{Job: child})
	}
	must.NoError(t, dispatch(11, "00000001", "tok"))
	err := dispatch(12, "00000002", "tok")
	must.ErrorIs(t, err, structs.ErrDispatchTokenUsed)
	must.StrContains(t, err.Error(), "tmpl/dispatch-1772359200-00000001")
	must.NoError(t, dispatch(13, "00000003", "other"))
	must.NoError(t, dispatch(14, "00000004", ""))
	must.NoError(t, dispatch(15, "00000005", ""))

	// Once the first child is stopped its token may be used again.
	must.NoError(t, applyStop(s, 16, nil, structs.DefaultNamespace, "tmpl/dispatch-1772359200-00000001", nil))
	must.NoError(t, dispatch(17, "00000006", "tok"))
}
