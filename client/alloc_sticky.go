package client

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/allocdir"
)

// takeOverDisk hands a sticky or migrating ephemeral disk from the allocation this one
// replaces to this one, when the previous allocation ran on this node: once the previous
// allocation's tasks have ended, its alloc/data and each task's local directory move here,
// before any task of this allocation starts. With migrate, a previous allocation of another
// node has its data fetched from that node instead (alloc_migrate.go); with sticky alone it
// is not, and the tasks start with an empty disk.
func (r *allocRunner) takeOverDisk(tg *api.TaskGroup, prevID string) {
	d := tg.EphemeralDisk
	if prevID == "" || d == nil || !((d.Sticky != nil && *d.Sticky) || (d.Migrate != nil && *d.Migrate)) {
		return
	}
	prevDir, err := allocdir.Join(r.c.config.AllocDir, prevID)
	if err != nil {
		return
	}
	r.c.mu.Lock()
	prev := r.c.runners[prevID]
	r.c.mu.Unlock()
	if prev == nil && d.Migrate != nil && *d.Migrate {
		if _, err := os.Lstat(prevDir); errors.Is(err, fs.ErrNotExist) {
			r.fetchRemoteDisk(tg, prevID)
			return
		}
	}
	if prev != nil {
		// Its tasks may still be stopping (shutdown delays, kill timeouts): wait for them,
		// unless this allocation is stopped or removed meanwhile.
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-prev.done:
				break wait
			case <-tick.C:
				r.mu.Lock()
				leaving := r.stopping || r.destroyed || r.silent
				r.mu.Unlock()
				if leaving {
					return
				}
			}
		}
	}
	moves := [][2]string{{filepath.Join(prevDir, "alloc", "data"), filepath.Join(r.dir, "alloc", "data")}}
	for _, task := range tg.Tasks {
		if allocdir.CheckElem(task.Name) == nil {
			moves = append(moves, [2]string{filepath.Join(prevDir, task.Name, "local"), filepath.Join(r.dir, task.Name, "local")})
		}
	}
	for _, m := range moves {
		from, to := m[0], m[1]
		if fi, err := os.Lstat(from); err != nil || !fi.IsDir() {
			continue // nothing kept there (or a link a task left in its place: not followed)
		}
		if err := allocdir.MkdirAll(r.c.config.AllocDir, filepath.Dir(to), 0o755); err != nil {
			r.logger.Warn("taking over the previous allocation's disk failed", "previous_alloc", prevID, "error", err)
			continue
		}
		if err := os.Rename(from, to); err != nil && !errors.Is(err, fs.ErrExist) {
			r.logger.Warn("taking over the previous allocation's disk failed", "previous_alloc", prevID, "path", from, "error", err)
		}
	}
}
