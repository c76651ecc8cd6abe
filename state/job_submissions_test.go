package state

import (
	"fmt"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func registerWithSource(t *testing.T, s *StateStore, index uint64, job *structs.Job, source string) {
	t.Helper()
	must.NoError(t, s.ApplyJobRegister(index, &structs.JobRegisterRequest{Job: job,
		Submission: &api.JobSubmission{Source: source, Format: "hcl2", Variables: "v = 1"}}))
}

// TestJobSubmissions: each version keeps the source it was registered from; a registration
// that changes nothing keeps the first; pruning a version and purging the job remove theirs,
// and a purge leaves a job whose ID extends this one alone.
func TestJobSubmissions(t *testing.T) {
	s := testStateStoreConfig(t, Config{JobTrackedVersions: 2})
	for i := range 3 {
		job := mockJob("web")
		job.Meta = map[string]string{"v": fmt.Sprint(i)}
		registerWithSource(t, s, uint64(10+i), job, fmt.Sprintf("source v%d", i))
	}
	registerWithSource(t, s, 13, func() *structs.Job {
		j := mockJob("web")
		j.Meta = map[string]string{"v": "2"}
		return j
	}(), "same spec again")
	registerWithSource(t, s, 14, mockJob("web2"), "the other job")

	cases := []struct {
		name    string
		id      string
		version uint64
		want    string // "" when none is kept
	}{
		{name: "pruned with its version", id: "web", version: 0},
		{name: "kept", id: "web", version: 1, want: "source v1"},
		{name: "unchanged spec keeps the first source", id: "web", version: 2, want: "source v2"},
		{name: "other job", id: "web2", version: 0, want: "the other job"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := s.JobSubmission(nil, structs.DefaultNamespace, tc.id, tc.version)
			must.NoError(t, err)
			if tc.want == "" {
				must.Nil(t, sub)
				return
			}
			must.NotNil(t, sub)
			must.Eq(t, tc.want, sub.Source)
			must.Eq(t, "hcl2", sub.Format)
			must.Eq(t, "v = 1", sub.Variables)
		})
	}

	must.NoError(t, applyPurge(s, 20, actorAlice, structs.DefaultNamespace, "web", "rec-web", nil))
	for _, v := range []uint64{1, 2} {
		sub, err := s.JobSubmission(nil, structs.DefaultNamespace, "web", v)
		must.NoError(t, err)
		must.Nil(t, sub)
	}
	sub, err := s.JobSubmission(nil, structs.DefaultNamespace, "web2", 0)
	must.NoError(t, err)
	must.NotNil(t, sub)
}
