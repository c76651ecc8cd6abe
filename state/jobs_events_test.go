package state

import (
	"fmt"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

type jobVersionEventView struct {
	ID         string
	Version    uint64
	Tagged     bool
	RemovedTag string
	Actor      *structs.Actor
}

func versionView(p *structs.JobVersionEvent) jobVersionEventView {
	v := jobVersionEventView{ID: p.Job.ID, Version: p.Job.Version, Tagged: p.Job.VersionTag != nil, Actor: p.Actor}
	if p.RemovedTag != nil {
		v.RemovedTag = p.RemovedTag.Name
	}
	return v
}

func wantVersionEvent(typ string, index, version uint64, removedTag string, actor *structs.Actor) structs.Event {
	p := &structs.JobVersionEvent{Job: &structs.Job{ID: "web", Version: version}, Actor: actor}
	if removedTag != "" {
		p.RemovedTag = &structs.JobVersionTag{Name: removedTag}
	}
	return structs.Event{Topic: structs.TopicJob, Type: typ, Key: "web", Namespace: structs.DefaultNamespace, Index: index, Payload: p}
}

// TestJobVersionEvents runs real transactions on a store keeping two untagged versions: every
// way a version leaves the store or loses its tag is published with the write's actor, and
// nothing else is.
func TestJobVersionEvents(t *testing.T) {
	// webVersions registers versions 0..n-1 of web at indexes 10.. by alice.
	webVersions := func(n int) func(s *StateStore) error {
		return func(s *StateStore) error {
			for i := 0; i < n; i++ {
				job := mockJob("web")
				job.Meta = map[string]string{"rev": fmt.Sprint(i)}
				if err := applyRegister(s, uint64(10+i), actorAlice, job, nil); err != nil {
					return err
				}
			}
			return nil
		}
	}
	tag := func(index, version uint64, name string) func(s *StateStore) error {
		return func(s *StateStore) error {
			return applyTxn(s, structs.JobVersionTagRequestType, index, &TxnMeta{Actor: actorAlice}, func(txn *Txn) error {
				return s.TagJobVersionTxn(txn, structs.DefaultNamespace, "web", &version, name, &structs.JobVersionTag{Name: name})
			})
		}
	}
	untag := func(index uint64, name string) func(s *StateStore) error {
		return func(s *StateStore) error {
			return applyTxn(s, structs.JobVersionTagRequestType, index, &TxnMeta{Actor: actorBob}, func(txn *Txn) error {
				return s.TagJobVersionTxn(txn, structs.DefaultNamespace, "web", nil, name, nil)
			})
		}
	}
	register := func(index uint64, rev string) func(s *StateStore) error {
		return func(s *StateStore) error {
			job := mockJob("web")
			job.Meta = map[string]string{"rev": rev}
			return applyRegister(s, index, actorBob, job, nil)
		}
	}
	steps := func(fns ...func(s *StateStore) error) func(s *StateStore) error {
		return func(s *StateStore) error {
			for _, fn := range fns {
				if err := fn(s); err != nil {
					return err
				}
			}
			return nil
		}
	}
	cases := []struct {
		Name       string
		Setup      func(s *StateStore) error
		Mutate     func(s *StateStore) error
		WantEvents []structs.Event
		Check      func(t *testing.T, s *StateStore)
	}{
		{
			Name:   "register within the window prunes nothing",
			Setup:  webVersions(1),
			Mutate: register(20, "new"),
			WantEvents: []structs.Event{
				wantJobEvent("JobRegistered", 20, &structs.Job{ID: "web", Version: 1, ModifyIndex: 20}, false, actorBob),
			},
		},
		{
			Name:   "register past the window prunes the oldest version",
			Setup:  webVersions(2),
			Mutate: register(20, "new"),
			WantEvents: []structs.Event{
				wantJobEvent("JobRegistered", 20, &structs.Job{ID: "web", Version: 2, ModifyIndex: 20}, false, actorBob),
				wantVersionEvent(structs.TypeJobVersionPruned, 20, 0, "", actorBob),
			},
		},
		{
			Name:   "untag of a version inside the window",
			Setup:  steps(webVersions(2), tag(15, 0, "golden")),
			Mutate: untag(20, "golden"),
			WantEvents: []structs.Event{
				wantVersionEvent(structs.TypeJobVersionUntagged, 20, 0, "golden", actorBob),
			},
		},
		{
			Name:   "untag that lets the same write prune the version",
			Setup:  steps(webVersions(1), tag(15, 0, "golden"), register(16, "a"), register(17, "b")),
			Mutate: untag(20, "golden"),
			WantEvents: []structs.Event{
				wantVersionEvent(structs.TypeJobVersionUntagged, 20, 0, "golden", actorBob),
				wantVersionEvent(structs.TypeJobVersionPruned, 20, 0, "", actorBob),
			},
			Check: func(t *testing.T, s *StateStore) {
				v, err := s.JobByIDAndVersion(nil, structs.DefaultNamespace, "web", 0)
				must.NoError(t, err)
				must.Nil(t, v)
			},
		},
		{
			Name:   "untag of the current version also updates the job",
			Setup:  steps(webVersions(1), tag(15, 0, "golden")),
			Mutate: untag(20, "golden"),
			WantEvents: []structs.Event{
				wantVersionEvent(structs.TypeJobVersionUntagged, 20, 0, "golden", actorBob),
				wantJobEvent("JobVersionTagged", 20, &structs.Job{ID: "web", Version: 0, ModifyIndex: 20}, false, actorBob),
			},
		},
		{
			Name:   "tagging removes nothing",
			Setup:  webVersions(2),
			Mutate: tag(20, 0, "golden"),
		},
		{
			Name:  "purge removes versions without version events",
			Setup: steps(webVersions(2), tag(15, 0, "golden")),
			Mutate: func(s *StateStore) error {
				return applyTxn(s, structs.JobDeregisterRequestType, 20, &TxnMeta{Purge: true, Actor: actorBob}, func(txn *Txn) error {
					return s.DeleteJobTxn(txn, structs.DefaultNamespace, "web")
				})
			},
			WantEvents: []structs.Event{
				wantJobEvent("JobDeregistered", 20, &structs.Job{ID: "web", Version: 1, ModifyIndex: 11}, true, actorBob),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s := testStateStoreConfig(t, Config{JobTrackedVersions: 2})
			if tc.Setup != nil {
				must.NoError(t, tc.Setup(s))
			}
			got := captureEvents(s)
			must.NoError(t, tc.Mutate(s))
			assertEvents(t, tc.WantEvents, *got)
			if tc.Check != nil {
				tc.Check(t, s)
			}
		})
	}
}
