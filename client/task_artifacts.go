package client

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nomadfork/nomad/client/artifact"
	"github.com/nomadfork/nomad/client/taskenv"
	"github.com/nomadfork/nomad/structs"
)

// Upstream's event types for artifacts, which tools and the UI read.
const (
	taskEventDownloadingArtifacts = "Downloading Artifacts"
	taskEventArtifactFailed       = "Failed Artifact Download"
)

// fetchArtifacts downloads the task's artifacts before its templates render (a template may
// read one). A failed download is retried as the restart policy allows, its attempts shared
// with the task's restarts as upstream counts them, and fails the task once they are used up.
// It ends early, with an error, when the task is killed meanwhile.
func (tr *taskRunner) fetchArtifacts(allocRoot string, env *taskenv.Env) error {
	if len(tr.task.Artifacts) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-tr.killCh:
			cancel()
		case <-tr.detachCh:
			cancel()
		case <-stop:
		}
	}()
	fetcher := artifact.New(tr.ar.c.config.Artifact)
	for {
		tr.event(&structs.TaskEvent{Type: taskEventDownloadingArtifacts, Message: "Client is downloading artifacts"}, nil)
		err := tr.fetchEach(ctx, fetcher, allocRoot, env)
		if err == nil {
			return nil
		}
		tr.event(&structs.TaskEvent{Type: taskEventArtifactFailed, DownloadError: err.Error(), Message: err.Error()}, nil)
		if ctx.Err() != nil {
			return fmt.Errorf("artifacts not downloaded: the task was stopped")
		}
		delay, ok := tr.policy.next(time.Now())
		if !ok {
			return err
		}
		tr.event(&structs.TaskEvent{Type: structs.TaskEventRestarting, StartDelay: int64(delay),
			RestartReason: "Restart within policy", Message: fmt.Sprintf("Task restarting in %s", delay)}, func(ts *structs.TaskState) {
			ts.Restarts++
			ts.LastRestart = time.Now()
		})
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("artifacts not downloaded: the task was stopped")
		}
	}
}

func (tr *taskRunner) fetchEach(ctx context.Context, f *artifact.Fetcher, allocRoot string, env *taskenv.Env) error {
	for i, a := range tr.task.Artifacts {
		req := artifact.Request{Artifact: a, AllocDir: allocRoot, TaskName: tr.task.Name, Replace: env.Replace}
		if a.Chown {
			owner, err := tr.artifactOwner()
			if err != nil {
				return fmt.Errorf("artifact %d: chown: %w", i+1, err)
			}
			req.Owner = owner
		}
		err := f.Fetch(ctx, req)
		if err != nil {
			if len(tr.task.Artifacts) > 1 {
				return fmt.Errorf("artifact %d: %w", i+1, err)
			}
			return err
		}
	}
	return nil
}

// artifactOwner is who a chown = true artifact belongs to: the task's user, or for the exec
// driver, which runs a task without one as nobody, nobody. Other drivers run such a task as
// the agent's own user, who owns the files already.
func (tr *taskRunner) artifactOwner() (*artifact.Owner, error) {
	name := tr.task.User
	if name == "" && tr.task.Driver == "exec" {
		name = "nobody"
	}
	if name == "" {
		return nil, nil
	}
	u, err := lookupAccount(name)
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", name, err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("user %q has no numeric uid", name)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("user %q has no numeric gid", name)
	}
	return &artifact.Owner{UID: uid, GID: gid}, nil
}
