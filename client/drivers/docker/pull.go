package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/nomadfork/nomad/client/drivers"
)

// defaultPullTimeout is upstream's image_pull_timeout default.
const defaultPullTimeout = 5 * time.Minute

// defaultPullActivityTimeout is upstream's pull_activity_timeout default.
const defaultPullActivityTimeout = 2 * time.Minute

// defaultProgressEvery is how often a pull's progress becomes a task event: often enough to
// show a long pull is alive, rarely enough not to flood the task's events.
const defaultProgressEvery = 10 * time.Second

// pullCall is one pull of the engine that every task wanting the same image with the same
// credentials waits on. It runs on the driver's context, not a waiter's: a waiter that gives
// up (its own image_pull_timeout) leaves the others waiting, and the pull is cancelled only
// once nobody waits for it.
type pullCall struct {
	done    chan struct{}
	err     error
	cancel  context.CancelFunc
	waiters map[int]*pullWaiter
}

// pullWaiter forwards a pull's progress to one task until its Start returns: gone is set,
// under mu, before the waiter returns, so no event reaches a task after its start ended.
type pullWaiter struct {
	mu   sync.Mutex
	gone bool
	emit func(string)
}

func (w *pullWaiter) send(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.gone {
		w.emit(msg)
	}
}

func (w *pullWaiter) leave() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gone = true
}

// pullTracker coalesces concurrent pulls. Its goroutines are owned by the driver: they end
// when their pull ends, which the driver's context bounds.
type pullTracker struct {
	mu     sync.Mutex
	calls  map[string]*pullCall
	nextID int
	// pulls counts the pulls sent to the engine, for tests.
	pulls int
}

// pullKey tells pulls apart by image and by credentials: a task never shares a pull made
// with another task's credentials (it would get their answer, or their access).
func pullKey(ref, encodedAuth string) string {
	sum := sha256.Sum256([]byte(encodedAuth))
	return ref + "\x00" + hex.EncodeToString(sum[:8])
}

// pull pulls ref, joining a pull of it already under way, and waits at most timeout.
func (d *Driver) pull(ctx context.Context, cfg *drivers.TaskConfig, ref string, auth *registry.AuthConfig, softFail bool, timeout time.Duration) error {
	encoded := ""
	if auth != nil {
		var err error
		if encoded, err = registry.EncodeAuthConfig(*auth); err != nil {
			return fmt.Errorf("docker: encoding registry credentials: %w", err)
		}
	}
	err := d.pullShared(ctx, cfg, ref, encoded, timeout)
	if err != nil && auth != nil && softFail && isAuthError(err) {
		cfg.Emit(fmt.Sprintf("Authentication to the registry of image %q failed; retrying without credentials (auth_soft_fail)", ref))
		if err2 := d.pullShared(ctx, cfg, ref, "", timeout); err2 != nil {
			// The registry's answer to the credentials is the one the operator can act on.
			return fmt.Errorf("%w (retried without credentials: %v)", err, err2)
		}
		return nil
	}
	return err
}

func (d *Driver) pullShared(ctx context.Context, cfg *drivers.TaskConfig, ref, encodedAuth string, timeout time.Duration) error {
	key := pullKey(ref, encodedAuth)
	t := &d.pulls
	t.mu.Lock()
	call, joined := t.calls[key]
	if !joined {
		// Checked under mu, where Shutdown cancels d.ctx: no pull joins wg once Shutdown
		// waits on it.
		if d.ctx.Err() != nil {
			t.mu.Unlock()
			return fmt.Errorf("docker: failed to pull image %q: the driver is shutting down", ref)
		}
		pctx, cancel := context.WithCancel(d.ctx)
		call = &pullCall{done: make(chan struct{}), cancel: cancel, waiters: map[int]*pullWaiter{}}
		t.calls[key] = call
		t.pulls++
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer cancel()
			err := d.pullOnce(pctx, ref, encodedAuth, func(msg string) {
				t.mu.Lock()
				ws := make([]*pullWaiter, 0, len(call.waiters))
				for _, w := range call.waiters {
					ws = append(ws, w)
				}
				t.mu.Unlock()
				for _, w := range ws {
					w.send(msg)
				}
			})
			t.mu.Lock()
			call.err = err
			if t.calls[key] == call {
				delete(t.calls, key)
			}
			t.mu.Unlock()
			close(call.done)
		}()
	}
	id := t.nextID
	t.nextID++
	w := &pullWaiter{emit: cfg.Emit}
	call.waiters[id] = w
	t.mu.Unlock()
	defer w.leave()
	if joined {
		cfg.Emit(fmt.Sprintf("Waiting for the pull of image %q already under way", ref))
	} else {
		cfg.Emit(fmt.Sprintf("Downloading image %s", ref))
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	select {
	case <-call.done:
		return call.err
	case <-timer.C:
		waitErr = fmt.Errorf("docker: failed to pull image %q: no result within image_pull_timeout %s", ref, timeout)
	case <-ctx.Done():
		waitErr = fmt.Errorf("docker: pulling image %q: %w", ref, ctx.Err())
	}
	t.mu.Lock()
	delete(call.waiters, id)
	if len(call.waiters) == 0 {
		select {
		case <-call.done:
		default:
			// Abandoned: a task that wants the image from now on starts a pull of its own
			// instead of joining this cancelled one.
			call.cancel()
			if t.calls[key] == call {
				delete(t.calls, key)
			}
		}
	}
	t.mu.Unlock()
	return waitErr
}

// pullOnce asks the engine for the image and follows its progress stream, reporting
// progress through emit at most every progressEvery.
func (d *Driver) pullOnce(ctx context.Context, ref, encodedAuth string, emit func(string)) error {
	// A pull that stalls is cancelled after the activity timeout, however long the waiters'
	// image_pull_timeout: a stuck registry connection would otherwise hold them all.
	activity := d.opts.PullActivityTimeout
	if activity <= 0 {
		activity = defaultPullActivityTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stalled := fmt.Errorf("docker: failed to pull image %q: no progress within pull_activity_timeout %s", ref, activity)
	watchdog := time.AfterFunc(activity, func() { cancel(stalled) })
	defer watchdog.Stop()
	rc, err := d.cli.ImagePull(ctx, ref, image.PullOptions{RegistryAuth: encodedAuth})
	if err != nil {
		if errors.Is(context.Cause(ctx), stalled) {
			return stalled
		}
		return pullError(ref, err)
	}
	defer rc.Close()
	every := d.progressEvery
	if every <= 0 {
		every = defaultProgressEvery
	}
	p := newPullProgress()
	last := time.Now()
	dec := json.NewDecoder(rc)
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if ctx.Err() != nil {
				if errors.Is(context.Cause(ctx), stalled) {
					return stalled
				}
				return fmt.Errorf("docker: pulling image %q: %w", ref, ctx.Err())
			}
			return fmt.Errorf("docker: pulling image %q: reading the engine's answer: %w", ref, err)
		}
		if m.Error != nil {
			return pullError(ref, m.Error)
		}
		watchdog.Reset(activity)
		p.update(&m)
		if now := time.Now(); now.Sub(last) >= every {
			last = now
			emit(fmt.Sprintf("Image %s: %s", ref, p.String()))
		}
	}
}

// pullProgress sums the engine's per-layer progress.
type pullProgress struct {
	layers map[string]*jsonmessage.JSONProgress
	done   map[string]bool
}

func newPullProgress() *pullProgress {
	return &pullProgress{layers: map[string]*jsonmessage.JSONProgress{}, done: map[string]bool{}}
}

func (p *pullProgress) update(m *jsonmessage.JSONMessage) {
	if m.ID == "" {
		return
	}
	switch {
	case m.Status == "Downloading" && m.Progress != nil:
		p.layers[m.ID] = m.Progress
	case m.Status == "Pull complete" || m.Status == "Already exists" || m.Status == "Download complete":
		p.done[m.ID] = true
		if _, ok := p.layers[m.ID]; !ok {
			p.layers[m.ID] = &jsonmessage.JSONProgress{}
		}
	case strings.HasPrefix(m.Status, "Pulling fs layer") || m.Status == "Waiting":
		if _, ok := p.layers[m.ID]; !ok {
			p.layers[m.ID] = &jsonmessage.JSONProgress{}
		}
	}
}

func (p *pullProgress) String() string {
	var cur, total int64
	for _, l := range p.layers {
		cur += l.Current
		total += l.Total
	}
	return fmt.Sprintf("%d of %d layers done, %s of %s downloaded", len(p.done), len(p.layers), byteSize(cur), byteSize(total))
}

func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// pullError names the registry's answer in words a task event reader acts on; the engine's
// own text follows. Credentials never appear in it: the engine does not echo them, and ours
// are only ever sent encoded in a header.
func pullError(ref string, err error) error {
	msg := err.Error()
	var kind string
	switch {
	case isAuthError(err):
		kind = "unauthorized: the registry refused the credentials (or their absence)"
	case cerrdefs.IsNotFound(err) || containsAny(msg, "manifest unknown", "not found", "repository does not exist", "name unknown"):
		kind = "not found: the registry has no such image or tag"
	case containsAny(msg, "x509:", "certificate signed by unknown authority", "tls: failed to verify certificate"):
		kind = "registry's TLS certificate is not trusted (give the engine its CA in /etc/docker/certs.d/<registry>/ca.crt)"
	case containsAny(msg, "connection refused", "no such host", "i/o timeout", "dial tcp", "network is unreachable", "server gave HTTP response to HTTPS client", "TLS handshake", "EOF"):
		kind = "registry unreachable"
	default:
		kind = "pull failed"
	}
	return &PullError{Image: ref, Kind: kind, Err: err}
}

// PullError is a failed pull: Kind names the registry's answer.
type PullError struct {
	Image string
	Kind  string
	Err   error
}

func (e *PullError) Error() string {
	return fmt.Sprintf("docker: failed to pull image %q: %s: %s", e.Image, e.Kind, strings.TrimPrefix(e.Err.Error(), "Error response from daemon: "))
}

func (e *PullError) Unwrap() error { return e.Err }

func isAuthError(err error) bool {
	var pe *PullError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Kind, "unauthorized")
	}
	if cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err) {
		return true
	}
	return containsAny(err.Error(), "unauthorized", "authentication required", "no basic auth credentials", "access denied", "denied: requested access")
}

func containsAny(s string, subs ...string) bool {
	low := strings.ToLower(s)
	for _, sub := range subs {
		if strings.Contains(low, strings.ToLower(sub)) {
			return true
		}
	}
	return false
}
