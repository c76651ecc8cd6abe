package nomad

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// DefaultEnabledSchedulers are the scheduler types a worker takes by default, as upstream.
var DefaultEnabledSchedulers = []string{structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch, structs.JobTypeService, "_core"}

// workerPool is the scheduling workers' runtime configuration, which the agent API may change
// (`/v1/agent/schedulers/config`): the leader runs NumSchedulers workers in parallel (0: none,
// evaluations wait in the broker) and EnabledSchedulers says which job types they take
// evaluations of. A change takes effect once each worker has finished its evaluation.
type workerPool struct {
	mu      sync.Mutex
	num     int
	enabled []string
	started time.Time
	// changed is closed and replaced on every change, waking a worker that waits.
	changed chan struct{}
	// stopGeneration cancels the running workers' context (nil when none run). A change
	// calls it before it returns, so that once the API has answered no worker of the old
	// configuration takes another evaluation (a paused pool is paused when it says so).
	stopGeneration context.CancelFunc
}

func newWorkerPool(num int) *workerPool {
	return &workerPool{num: num, enabled: slices.Clone(DefaultEnabledSchedulers), started: time.Now(), changed: make(chan struct{})}
}

// WorkerPoolConfig is what the pool runs with.
type WorkerPoolConfig struct {
	NumSchedulers     int
	EnabledSchedulers []string
}

// startGeneration is the configuration workers start with now, the channel closed when it
// changes, and their context: a child of ctx that the next change cancels.
func (p *workerPool) startGeneration(ctx context.Context) (WorkerPoolConfig, <-chan struct{}, context.Context, context.CancelFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wctx, cancel := context.WithCancel(ctx)
	p.stopGeneration = cancel
	return WorkerPoolConfig{NumSchedulers: p.num, EnabledSchedulers: slices.Clone(p.enabled)}, p.changed, wctx, cancel
}

func (p *workerPool) get() (WorkerPoolConfig, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return WorkerPoolConfig{NumSchedulers: p.num, EnabledSchedulers: slices.Clone(p.enabled)}, p.changed
}

// SchedulerWorkerConfig is the scheduling worker's current configuration.
func (s *Server) SchedulerWorkerConfig() WorkerPoolConfig {
	c, _ := s.workers.get()
	return c
}

// SchedulerWorkerStarted is when the current configuration took effect.
func (s *Server) SchedulerWorkerStarted() time.Time {
	s.workers.mu.Lock()
	defer s.workers.mu.Unlock()
	return s.workers.started
}

// SetSchedulerWorkerConfig changes the worker's configuration at once: NumSchedulers from 0
// (paused) to the number of CPUs, and EnabledSchedulers, which must include "_core", naming
// only known scheduler types.
func (s *Server) SetSchedulerWorkerConfig(c WorkerPoolConfig) error {
	if c.NumSchedulers < 0 || c.NumSchedulers > runtime.NumCPU() {
		return structs.BadRequest("Invalid request: num_schedulers must be between 0 and %d", runtime.NumCPU())
	}
	if !slices.Contains(c.EnabledSchedulers, "_core") {
		return structs.BadRequest("Invalid request: enabled_schedulers must include _core")
	}
	for _, name := range c.EnabledSchedulers {
		if !slices.Contains(DefaultEnabledSchedulers, name) {
			return structs.BadRequest("Invalid request: unknown scheduler %q in enabled_schedulers", name)
		}
	}
	p := s.workers
	p.mu.Lock()
	defer p.mu.Unlock()
	p.num, p.enabled, p.started = c.NumSchedulers, slices.Clone(c.EnabledSchedulers), time.Now()
	if p.stopGeneration != nil {
		p.stopGeneration()
		p.stopGeneration = nil
	}
	close(p.changed)
	p.changed = make(chan struct{})
	return nil
}

// takes reports whether a worker with this configuration processes eval.
func (c WorkerPoolConfig) takes(eval *structs.Evaluation) bool {
	t := eval.Type
	if t == "" {
		t = structs.JobTypeService
	}
	return slices.Contains(c.EnabledSchedulers, t)
}
