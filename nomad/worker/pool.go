package worker

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

// Pool is the scheduling workers' runtime configuration, which the agent API may change
// (`/v1/agent/schedulers/config`): the leader runs NumSchedulers workers in parallel (0: none,
// evaluations wait in the broker) and EnabledSchedulers says which job types they take
// evaluations of. A change takes effect once each worker has finished its evaluation.
type Pool struct {
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

// NewPool is a pool of num workers taking the default scheduler types.
func NewPool(num int) *Pool {
	return &Pool{num: num, enabled: slices.Clone(DefaultEnabledSchedulers), started: time.Now(), changed: make(chan struct{})}
}

// PoolConfig is what the pool runs with.
type PoolConfig struct {
	NumSchedulers     int
	EnabledSchedulers []string
}

// startGeneration is the configuration workers start with now, the channel closed when it
// changes, and their context: a child of ctx that the next change cancels.
func (p *Pool) startGeneration(ctx context.Context) (PoolConfig, <-chan struct{}, context.Context, context.CancelFunc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wctx, cancel := context.WithCancel(ctx)
	p.stopGeneration = cancel
	return PoolConfig{NumSchedulers: p.num, EnabledSchedulers: slices.Clone(p.enabled)}, p.changed, wctx, cancel
}

// Config is the workers' current configuration.
func (p *Pool) Config() PoolConfig {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolConfig{NumSchedulers: p.num, EnabledSchedulers: slices.Clone(p.enabled)}
}

// Started is when the current configuration took effect.
func (p *Pool) Started() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// SetConfig changes the workers' configuration at once: NumSchedulers from 0 (paused) to the
// number of CPUs, and EnabledSchedulers, which must include "_core", naming only known
// scheduler types.
func (p *Pool) SetConfig(c PoolConfig) error {
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
