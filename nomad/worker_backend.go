package nomad

import (
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/nomad/worker"
	"github.com/nomadfork/nomad/scheduler"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// WorkerPoolConfig is the scheduling workers' configuration the agent API reads and sets.
type WorkerPoolConfig = worker.PoolConfig

// SchedulerWorkerConfig is the scheduling worker's current configuration.
func (s *Server) SchedulerWorkerConfig() WorkerPoolConfig { return s.workers.Config() }

// SchedulerWorkerStarted is when the current configuration took effect.
func (s *Server) SchedulerWorkerStarted() time.Time { return s.workers.Started() }

// SetSchedulerWorkerConfig changes the worker's configuration at once (worker.Pool.SetConfig).
func (s *Server) SetSchedulerWorkerConfig(c WorkerPoolConfig) error { return s.workers.SetConfig(c) }

// workerBackend gives the scheduling workers the broker, the state, the scheduler, Raft and
// the leader's clock.
type workerBackend struct{ s *Server }

func (b workerBackend) Broker() worker.Broker    { return b.s.evalBroker }
func (b workerBackend) State() *state.StateStore { return b.s.State() }
func (b workerBackend) JobMaxCount() int         { return b.s.jobMaxCount() }
func (b workerBackend) Now() time.Time           { return now() }
func (b workerBackend) Logger() hclog.Logger     { return b.s.logger }
func (b workerBackend) Apply(t structs.MessageType, msg any) (uint64, error) {
	return b.s.raftApply(t, msg)
}
func (b workerBackend) ComputePlan(in scheduler.Input) (*scheduler.Plan, error) {
	return computePlan(in)
}
func (b workerBackend) SchedulerInput(store *state.StateStore, job *structs.Job, namespace, jobID string) (scheduler.Input, error) {
	return b.s.schedulerInput(store, job, namespace, jobID)
}

// compute is the scheduler; tests replace it to make it fail.
var compute = scheduler.Compute

// computePlan runs the scheduler, turning a panic into an error: whatever the state holds,
// one evaluation that cannot be scheduled must not stop the leader's worker (nor a dry run
// the server that serves it). The worker and Job.Plan both run it.
func computePlan(in scheduler.Input) (plan *scheduler.Plan, err error) {
	defer func() {
		if r := recover(); r != nil {
			plan, err = nil, fmt.Errorf("scheduler failed on this evaluation: %v", r)
		}
	}()
	return compute(in), nil
}
