package state

import (
	"fmt"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestScalingEvents: events are kept newest first and bounded per group; a count change
// recorded with a registration carries that registration's evaluation; a purge removes them.
func TestScalingEvents(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))
	for i := range structs.JobTrackedScalingEvents + 2 {
		mustApply(t, s, structs.ScalingEventRegisterRequestType, uint64(11+i), nil, func(txn *Txn) error {
			return s.UpsertScalingEventTxn(txn, &structs.ScalingEventRequest{Namespace: structs.DefaultNamespace,
				JobID: "web", TaskGroup: "g", Event: &api.ScalingEvent{Message: fmt.Sprint(i)}})
		})
	}
	job := mockJob("web")
	count := int64(5)
	eval := mockEval("eval-scale", job, structs.EvalTriggerScaling)
	must.NoError(t, s.ApplyJobRegister(50, &structs.JobRegisterRequest{Job: job, Eval: eval,
		Scaling: &structs.ScalingEventRequest{Namespace: structs.DefaultNamespace, JobID: "web", TaskGroup: "g",
			Event: &api.ScalingEvent{Count: &count, PreviousCount: 1, Message: "more"}}}))

	got, err := s.ScalingEventsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	events := got.ScalingEvents["g"]
	must.Len(t, structs.JobTrackedScalingEvents, events)
	must.Eq(t, "more", events[0].Message)
	must.Eq(t, "eval-scale", *events[0].EvalID)
	must.Eq(t, uint64(50), events[0].CreateIndex)
	must.Eq(t, fmt.Sprint(structs.JobTrackedScalingEvents+1), events[1].Message)

	err = applyTxn(s, structs.ScalingEventRegisterRequestType, 51, nil, func(txn *Txn) error {
		return s.UpsertScalingEventTxn(txn, &structs.ScalingEventRequest{Namespace: structs.DefaultNamespace,
			JobID: "nope", TaskGroup: "g", Event: &api.ScalingEvent{}})
	})
	must.ErrorIs(t, err, structs.ErrJobNotFound)

	must.NoError(t, applyPurge(s, 60, actorAlice, structs.DefaultNamespace, "web", "rec-web", nil))
	got, err = s.ScalingEventsByJob(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Nil(t, got)
}
