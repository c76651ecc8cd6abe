package nomad

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// checkJobTotalSize refuses a registration after which the job's stored versions would
// together exceed server.job_max_total_size. The per-request body limit bounds one version
// only: without this, the version limit multiplies it (six versions of a 7 MB meta held 42 MB
// per job ID, in memory and in every snapshot).
//
// The versions counted are those the state store would keep after the write: the new one,
// every tagged one, and the newest untagged ones up to job_tracked_versions. An unchanged
// spec replaces the current version instead of adding one. It is checked on the leader
// before raftApply, never in the FSM, so servers configured differently cannot diverge.
func (s *Server) checkJobTotalSize(store *state.StateStore, existing, job *structs.Job) error {
	limit := s.jobMaxTotalSize()
	size, err := job.EncodedSize()
	if err != nil {
		return err
	}
	total, count := size, 1
	if total <= limit && existing != nil {
		versions, err := store.JobVersionsByID(nil, job.Namespace, job.ID)
		if err != nil {
			return err
		}
		replaces := !state.SpecChanged(existing, job)
		untagged := 1                // the new version, which takes a place in the window
		for _, v := range versions { // newest first, as pruning walks them
			if replaces && v.Version == existing.Version {
				continue
			}
			if v.VersionTag == nil {
				if untagged >= s.config.JobTrackedVersions {
					continue
				}
				untagged++
			}
			n, err := s.jobSizes.size(v)
			if err != nil {
				return err
			}
			total += n
			count++
		}
	}
	if total > limit {
		return structs.BadRequest("job %q would store %s in %d version(s), above job_max_total_size (%s); "+
			"shrink the job (meta, payloads, task config), tag fewer versions, or raise the server's limit",
			job.ID, humanBytes(total), count, humanBytes(limit))
	}
	return nil
}

func (s *Server) jobMaxTotalSize() int64 {
	if s.config.JobMaxTotalSize > 0 {
		return s.config.JobMaxTotalSize
	}
	return structs.DefaultJobMaxTotalSize
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// jobSizeCache remembers the encoded size of stored job versions, so a registration measures
// only its own version (about 40µs for a small job, far more for a large one) and not every
// retained one again. It is keyed by the row's address: a row in the state store is never
// changed in place (a write inserts a copy), so an address always has the same size, and an
// entry goes when the garbage collector frees its row.
type jobSizeCache struct {
	mu sync.Mutex
	m  map[weak.Pointer[structs.Job]]int64
}

func (c *jobSizeCache) size(stored *structs.Job) (int64, error) {
	key := weak.Make(stored)
	c.mu.Lock()
	n, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return n, nil
	}
	n, err := stored.EncodedSize()
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok {
		if c.m == nil {
			c.m = map[weak.Pointer[structs.Job]]int64{}
		}
		c.m[key] = n
		runtime.AddCleanup(stored, c.forget, key)
	}
	return n, nil
}

func (c *jobSizeCache) forget(key weak.Pointer[structs.Job]) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}
