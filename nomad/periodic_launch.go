package nomad

import (
	"time"

	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/structs"
)

// launchPeriodicChild launches parent's child for the launch at: the child (structs'
// PeriodicChild), its evaluation and the launch record go in one Raft entry, so the child
// exists exactly when the launch is recorded. PeriodicForce and the leader's dispatcher
// (nomad/periodic) both launch through it. The state refuses a launch not later than the
// recorded one (structs.ErrPeriodicLaunched).
func (s *Server) launchPeriodicChild(parent *structs.Job, at time.Time, actor *structs.Actor, wr structs.WriteRequest) (*structs.Evaluation, uint64, error) {
	child := parent.PeriodicChild(at)
	if actor != nil {
		child.NomadTokenID = actor.AccessorID
	}
	eval, err := worker.NewEval(child, structs.EvalTriggerPeriodicJob, 0, now().UnixNano())
	if err != nil {
		return nil, 0, err
	}
	wr.Namespace = parent.Namespace
	req := &structs.JobRegisterRequest{
		Job: child, Eval: eval, Actor: actor, WriteRequest: wr,
		PeriodicLaunch: &structs.PeriodicLaunch{Namespace: parent.Namespace, ID: parent.ID, Launch: at},
	}
	index, err := s.raftApply(structs.JobRegisterRequestType, req)
	if err != nil {
		return nil, 0, err
	}
	return eval, index, nil
}

// periodicLaunch is the dispatcher's Launch: a scheduled launch, made by the system.
func (s *Server) periodicLaunch(parent *structs.Job, at time.Time) error {
	_, _, err := s.launchPeriodicChild(parent, at, structs.ActorPeriodicDispatcher, structs.WriteRequest{Region: parent.Region})
	return err
}
