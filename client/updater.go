package client

import (
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// updateBatchDelay is how long the updater gathers changes before sending them: the task
// changes of one moment (an allocation's tasks all starting) become one Raft write.
const updateBatchDelay = 50 * time.Millisecond

// allocUpdater sends what the runners report to the servers, in batches, keeping only the
// latest report of each allocation and retrying those that failed to send.
type allocUpdater struct {
	c       *Client
	mu      sync.Mutex
	pending map[string]*structs.Allocation
	notify  chan struct{}
}

func newAllocUpdater(c *Client) *allocUpdater {
	return &allocUpdater{c: c, pending: map[string]*structs.Allocation{}, notify: make(chan struct{}, 1)}
}

// send queues an allocation's client fields for the next batch.
func (u *allocUpdater) send(a *structs.Allocation) {
	u.mu.Lock()
	u.pending[a.ID] = a
	u.mu.Unlock()
	select {
	case u.notify <- struct{}{}:
	default:
	}
}

func (u *allocUpdater) run() {
	defer u.c.wg.Done()
	for {
		select {
		case <-u.c.ctx.Done():
			return
		case <-u.notify:
		}
		if !u.c.sleep(updateBatchDelay) {
			return
		}
		u.mu.Lock()
		batch := make([]*structs.Allocation, 0, len(u.pending))
		for _, a := range u.pending {
			batch = append(batch, a)
		}
		u.pending = map[string]*structs.Allocation{}
		u.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		sort.Slice(batch, func(i, j int) bool { return batch[i].ID < batch[j].ID })
		var reply structs.GenericResponse
		err := u.c.servers.UpdateAllocations(&structs.AllocUpdateRequest{
			NodeID: u.c.node.ID, Alloc: batch, WriteRequest: u.c.writeRequest(),
		}, &reply)
		if err == nil {
			continue
		}
		if structs.ErrorCode(err) == http.StatusForbidden {
			// The servers refuse a whole batch that names an allocation not placed here (one
			// the GC removed, say); retried as it is, it would hold every other report back.
			batch = u.sendEach(batch)
			if len(batch) == 0 {
				continue
			}
		} else {
			u.c.logger.Warn("reporting allocation status failed", "error", err)
		}
		// Put back what no newer report replaced, and try again after a pause.
		u.mu.Lock()
		for _, a := range batch {
			if _, newer := u.pending[a.ID]; !newer {
				u.pending[a.ID] = a
			}
		}
		u.mu.Unlock()
		if !u.c.sleep(u.c.config.RetryInterval) {
			return
		}
		select {
		case u.notify <- struct{}{}:
		default:
		}
	}
}

// sendEach sends the batch's reports one at a time, drops those the servers refuse for good
// and returns those that failed otherwise, to be retried.
func (u *allocUpdater) sendEach(batch []*structs.Allocation) []*structs.Allocation {
	var retry []*structs.Allocation
	for _, a := range batch {
		var reply structs.GenericResponse
		err := u.c.servers.UpdateAllocations(&structs.AllocUpdateRequest{
			NodeID: u.c.node.ID, Alloc: []*structs.Allocation{a}, WriteRequest: u.c.writeRequest(),
		}, &reply)
		switch {
		case err == nil:
		case structs.ErrorCode(err) == http.StatusForbidden:
			u.c.logger.Warn("the servers refused this allocation's status; it is no longer reported", "alloc_id", a.ID, "error", err)
		default:
			u.c.logger.Warn("reporting allocation status failed", "error", err)
			retry = append(retry, a)
		}
	}
	return retry
}
