package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func applyProtect(s *StateStore, index uint64, actor *structs.Actor, id string, protected bool, reason string) error {
	return s.ApplyJobProtection(index, &structs.JobProtectionRequest{JobID: id, Protected: protected, Reason: reason,
		Actor: actor, ModifyTime: int64(index) * 1_000_000_000, WriteRequest: structs.WriteRequest{Namespace: structs.DefaultNamespace}})
}

// TestJobProtection_HoldsAgainstEveryRemoval: a protected job survives a purge (409 naming the
// reason, nothing written), a GC batch (skipped) and a registration (the protection stays);
// once unprotected it is purged and its protection goes with it.
func TestJobProtection_HoldsAgainstEveryRemoval(t *testing.T) {
	s := testStateStore(t)
	events := captureEvents(s)
	upsertJob(t, s, 10, mockJob("web"))
	must.NoError(t, applyStop(s, 11, actorAlice, structs.DefaultNamespace, "web", nil))

	err := applyProtect(s, 12, actorBob, "missing", true, "x")
	must.Eq(t, 404, structs.ErrorCode(err))

	must.NoError(t, applyProtect(s, 13, actorBob, "web", true, "billing depends on it"))
	p, err := s.JobProtectionByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Eq(t, &structs.JobProtection{Namespace: "default", JobID: "web", Protected: true, Reason: "billing depends on it",
		Actor: actorBob, ModifyTime: 13_000_000_000, CreateIndex: 13, ModifyIndex: 13}, p)
	last := (*events)[len(*events)-1]
	must.Eq(t, uint64(13), last.Index)
	must.Len(t, 1, last.Events)
	must.Eq(t, structs.TopicJob, last.Events[0].Topic)
	must.Eq(t, structs.TypeJobProtectionChanged, last.Events[0].Type)
	must.Eq(t, "web", last.Events[0].Key)
	must.Eq(t, actorBob, last.Events[0].Payload.(*structs.JobProtectionEvent).Actor)

	before := s.LatestIndex()
	err = applyPurge(s, 14, actorBob, structs.DefaultNamespace, "web", "rec-1", nil)
	must.Eq(t, 409, structs.ErrorCode(err))
	must.StrContains(t, err.Error(), "protected")
	must.StrContains(t, err.Error(), "billing depends on it")
	must.Eq(t, before, s.LatestIndex())
	records, err := s.PurgeRecords(nil)
	must.NoError(t, err)
	must.SliceEmpty(t, records)

	must.NoError(t, applyBatchDeregister(s, 15, []structs.NamespacedID{{Namespace: "default", ID: "web"}}))
	must.NotNil(t, currentJob(t, s, "web"))

	// Registering again replaces the spec, not the protection.
	job := mockJob("web")
	job.Meta = map[string]string{"rev": "2"}
	upsertJob(t, s, 16, job)
	p, err = s.JobProtected(structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.NotNil(t, p)

	must.NoError(t, applyProtect(s, 17, actorAlice, "web", false, "ignored"))
	p, err = s.JobProtectionByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.False(t, p.Protected)
	must.Eq(t, "", p.Reason)
	must.Eq(t, actorAlice, p.Actor)
	must.Eq(t, uint64(13), p.CreateIndex)

	must.NoError(t, applyPurge(s, 18, actorBob, structs.DefaultNamespace, "web", "rec-2", nil))
	p, err = s.JobProtectionByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Nil(t, p)
	// The job's purge event tells of the removal; the protection row's removal adds none.
	last = (*events)[len(*events)-1]
	for _, e := range last.Events {
		must.NotEq(t, structs.TypeJobProtectionChanged, e.Type)
	}
}
