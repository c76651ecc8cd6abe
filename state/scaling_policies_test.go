package state

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func scaledJob(id, policyID string, max int64) *structs.Job {
	j := mockJob(id)
	j.TaskGroups[0].Scaling = &api.ScalingPolicy{ID: policyID, Max: ptrOf(max), Enabled: ptrOf(true)}
	return j
}

func TestScalingPolicies_FollowTheJob(t *testing.T) {
	cases := []struct {
		name  string
		steps func(t *testing.T, s *StateStore)
		// want is the policy of job "web" afterwards (nil: none), and wantModify its index.
		want       *structs.ScalingPolicy
		wantCreate uint64
		wantModify uint64
	}{
		{
			name:  "register adds",
			steps: func(t *testing.T, s *StateStore) { upsertJob(t, s, 10, scaledJob("web", "p1", 5)) },
			want: &structs.ScalingPolicy{ID: "p1", Type: "horizontal", Namespace: "default", JobID: "web", Group: "web",
				Target: map[string]string{"Namespace": "default", "Job": "web", "Group": "web"}, Min: 1, Max: ptrOf(int64(5)), Enabled: true},
			wantCreate: 10, wantModify: 10,
		},
		{
			name: "an unchanged block keeps its row",
			steps: func(t *testing.T, s *StateStore) {
				upsertJob(t, s, 10, scaledJob("web", "p1", 5))
				j := scaledJob("web", "p1", 5)
				j.Priority = 70
				upsertJob(t, s, 11, j)
			},
			want: &structs.ScalingPolicy{ID: "p1", Type: "horizontal", Namespace: "default", JobID: "web", Group: "web",
				Target: map[string]string{"Namespace": "default", "Job": "web", "Group": "web"}, Min: 1, Max: ptrOf(int64(5)), Enabled: true},
			wantCreate: 10, wantModify: 10,
		},
		{
			name: "a changed block rewrites it",
			steps: func(t *testing.T, s *StateStore) {
				upsertJob(t, s, 10, scaledJob("web", "p1", 5))
				upsertJob(t, s, 11, scaledJob("web", "p1", 9))
			},
			want: &structs.ScalingPolicy{ID: "p1", Type: "horizontal", Namespace: "default", JobID: "web", Group: "web",
				Target: map[string]string{"Namespace": "default", "Job": "web", "Group": "web"}, Min: 1, Max: ptrOf(int64(9)), Enabled: true},
			wantCreate: 10, wantModify: 11,
		},
		{
			name: "stopping the job disables it",
			steps: func(t *testing.T, s *StateStore) {
				upsertJob(t, s, 10, scaledJob("web", "p1", 5))
				must.NoError(t, applyStop(s, 11, nil, "default", "web", nil))
			},
			want: &structs.ScalingPolicy{ID: "p1", Type: "horizontal", Namespace: "default", JobID: "web", Group: "web",
				Target: map[string]string{"Namespace": "default", "Job": "web", "Group": "web"}, Min: 1, Max: ptrOf(int64(5)), Enabled: false},
			wantCreate: 10, wantModify: 11,
		},
		{
			name: "removing the block deletes it",
			steps: func(t *testing.T, s *StateStore) {
				upsertJob(t, s, 10, scaledJob("web", "p1", 5))
				upsertJob(t, s, 11, mockJob("web"))
			},
		},
		{
			name: "purging the job deletes it, and not a longer job ID's",
			steps: func(t *testing.T, s *StateStore) {
				upsertJob(t, s, 10, scaledJob("web", "p1", 5))
				upsertJob(t, s, 11, scaledJob("web2", "p2", 5))
				must.NoError(t, applyPurge(s, 12, nil, "default", "web", "rec", nil))
				p, err := s.ScalingPolicyByID(nil, "p2")
				must.NoError(t, err)
				must.NotNil(t, p)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			tc.steps(t, s)
			got, err := s.ScalingPolicies(nil, "default", "web")
			must.NoError(t, err)
			if tc.want == nil {
				must.SliceEmpty(t, got)
				p, err := s.ScalingPolicyByID(nil, "p1")
				must.NoError(t, err)
				must.Nil(t, p)
				return
			}
			must.SliceLen(t, 1, got)
			must.Eq(t, tc.wantCreate, got[0].CreateIndex)
			must.Eq(t, tc.wantModify, got[0].ModifyIndex)
			tc.want.CreateIndex, tc.want.ModifyIndex = got[0].CreateIndex, got[0].ModifyIndex
			must.Eq(t, tc.want, got[0])
		})
	}
}

func TestScalingPolicies_RefuseABlockWithoutID(t *testing.T) {
	s := testStateStore(t)
	err := applyRegister(s, 10, nil, scaledJob("web", "", 5), nil)
	must.ErrorContains(t, err, `scaling policy of group "web" has no ID`)
	job, err := s.JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Nil(t, job)
}
