package docker

import (
	"context"
	"sync"
	"time"

	"github.com/distribution/reference"
	"github.com/docker/docker/api/types/image"
)

// imageRefs counts the containers of this driver using each image, and removes an image the
// driver pulled once nothing has used it for the GC delay. An image the driver did not pull
// (built or loaded on the node, or pulled by an earlier run of the agent) is never removed:
// an operator put it there.
//
// Invariant: an image with refs > 0 has no timer, and a timer's callback removes the image
// only if, under mu, it is still the timer recorded for the image and refs is 0.
type imageRefs struct {
	mu     sync.Mutex
	refs   map[string]int
	pulled map[string]bool
	timers map[string]*gcTimer
	closed bool
}

// gcTimer is a pending removal; its identity tells a stale callback from the current one.
type gcTimer struct{ t *time.Timer }

// imageKey is the image's name as the engine would store its tag, so that "x" and
// "docker.io/library/x:latest" count as one image.
func imageKey(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.FamiliarString(reference.TagNameOnly(named))
}

func (d *Driver) pulledImage(key string) {
	r := &d.images
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pulled[key] = true
}

func (d *Driver) acquireImage(key string) {
	r := &d.images
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refs[key]++
	if t, ok := r.timers[key]; ok {
		t.t.Stop()
		delete(r.timers, key)
	}
}

// releaseImage drops one use of the image and, when it was the last one, schedules its
// removal.
func (d *Driver) releaseImage(key string) {
	r := &d.images
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refs[key] > 0 {
		r.refs[key]--
	}
	if r.refs[key] > 0 {
		return
	}
	delete(r.refs, key)
	if r.closed || !d.opts.ImageGC || !r.pulled[key] {
		return
	}
	if t, ok := r.timers[key]; ok {
		t.t.Stop()
	}
	g := &gcTimer{}
	g.t = time.AfterFunc(d.opts.ImageGCDelay, func() { d.removeImage(key, g) })
	r.timers[key] = g
}

// removeImage runs on the timer's goroutine; it joins the driver's WaitGroup under mu, before
// Shutdown (which sets closed under mu) can wait, so Shutdown waits for it.
func (d *Driver) removeImage(key string, t *gcTimer) {
	r := &d.images
	r.mu.Lock()
	if r.closed || r.timers[key] != t || r.refs[key] > 0 {
		r.mu.Unlock()
		return
	}
	delete(r.timers, key)
	delete(r.pulled, key)
	d.wg.Add(1)
	r.mu.Unlock()
	defer d.wg.Done()
	ctx, cancel := context.WithTimeout(d.ctx, apiTimeout)
	defer cancel()
	// Not forced: an image a container outside the driver still uses stays.
	if _, err := d.cli.ImageRemove(ctx, key, image.RemoveOptions{PruneChildren: true}); err != nil {
		d.opts.Logger.Warn("image GC: removing an unused image failed", "image", key, "error", err)
		return
	}
	d.opts.Logger.Debug("image GC: removed an unused image", "image", key)
}

// close stops every pending removal; the images stay.
func (r *imageRefs) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for k, t := range r.timers {
		t.t.Stop()
		delete(r.timers, k)
	}
}

// latestTag reports whether ref names its image by the "latest" tag, given or implied; a
// digest pins the image whatever the tag.
func latestTag(ref string) bool {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return false
	}
	if _, ok := named.(reference.Digested); ok {
		return false
	}
	tagged, ok := named.(reference.Tagged)
	return !ok || tagged.Tag() == "latest"
}
