package client

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/taskenv"
	"github.com/nomadfork/nomad/client/template"
	"github.com/nomadfork/nomad/structs"
)

// setupTemplates renders the task's templates before it starts (upstream starts a task only
// after each of its templates rendered once) and adds what its env templates give to env.
// The manager it returns keeps them rendered while the task runs; the caller stops it. A
// kill or an agent shutdown while waiting for data ends the wait.
func (tr *taskRunner) setupTemplates(taskDir string, env *taskenv.Env, token string) (*template.Manager, error) {
	if len(tr.task.Templates) == 0 {
		return nil, nil
	}
	nomad := tr.ar.c.config.TemplateAPI
	nomad.Token = token
	nomad.Namespace = tr.alloc.Namespace
	m, err := template.New(&template.Config{
		Templates: tr.task.Templates,
		TaskDir:   taskDir,
		AllocDir:  filepath.Dir(taskDir),
		Env:       env.Map(),
		Replace:   env.Replace,
		Nomad:     nomad,
		Logger:    tr.ar.logger.Named("template").With("task", tr.task.Name),
		Blocked: func(msg string) {
			tr.event(&structs.TaskEvent{Type: structs.TaskEventHookMessage, Message: "Template: " + msg}, nil)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("template failed: %w", err)
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if tr.restoredState != nil {
		// A restored task is running already: waiting long for data would leave it
		// unwatched (setup comes before re-attaching).
		ctx, cancel = context.WithTimeout(context.Background(), restoredRenderTimeout)
	} else {
		ctx, cancel = context.WithCancel(context.Background())
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-tr.killCh:
		case <-tr.detachCh:
		case <-ctx.Done():
		}
		cancel()
	}()
	defer func() { cancel(); <-stopped }()
	tmplEnv, err := m.Render(ctx)
	if err != nil {
		m.Stop()
		return nil, err
	}
	for k, v := range tmplEnv {
		env.Set(k, v)
	}
	return m, nil
}

// withTemplateEnv is cfg with the environment the env templates give now, for a restart
// after a re-render.
func withTemplateEnv(cfg *drivers.TaskConfig, base, tmplEnv map[string]string) *drivers.TaskConfig {
	out := *cfg
	out.Env = maps.Clone(base)
	maps.Copy(out.Env, tmplEnv)
	return &out
}

// templateSignal sends a changed template's change_signal to the running task.
func (tr *taskRunner) templateSignal(h drivers.TaskHandle, name string) {
	tr.event(&structs.TaskEvent{Type: structs.TaskEventSignaling, TaskSignal: name,
		TaskSignalReason: "Template re-rendered", Message: "Template re-rendered"}, nil)
	sig, err := drivers.ParseSignal(name)
	if err == nil {
		err = h.Signal(sig)
	}
	if err != nil {
		tr.event(&structs.TaskEvent{Type: structs.TaskEventSignaling, TaskSignal: name,
			Message: fmt.Sprintf("Sending signal %s for a re-rendered template failed: %v", name, err)}, nil)
	}
}

// firstRenderChangeScripts are the change scripts of task's templates in mode "script"
// with run_on_first_render.
func firstRenderChangeScripts(task *api.Task) []*api.ChangeScript {
	var out []*api.ChangeScript
	for _, t := range task.Templates {
		if t != nil && t.ChangeMode != nil && *t.ChangeMode == template.ChangeModeScript && t.ChangeScript != nil &&
			t.ChangeScript.RunOnFirstRender != nil && *t.ChangeScript.RunOnFirstRender {
			out = append(out, t.ChangeScript)
		}
	}
	return out
}

// restoredRenderTimeout bounds the first render of a task restored after an agent restart.
const restoredRenderTimeout = 30 * time.Second

// defaultScriptTimeout bounds a change script without a timeout (upstream's default).
const defaultScriptTimeout = 5 * time.Second

// templateScript runs a changed template's change_script in the running task, as alloc exec
// would. A failure is a task event; with fail_on_error it kills the task, failed. Only the
// program is named in events: its arguments and output may hold what the template rendered.
func (tr *taskRunner) templateScript(cfg *drivers.TaskConfig, s *api.ChangeScript) {
	cmd := *s.Command
	fail := func(msg string) {
		tr.event(&structs.TaskEvent{Type: structs.TaskEventHookFailed, Message: msg}, nil)
		if s.FailOnError != nil && *s.FailOnError {
			tr.killFails = true
			tr.kill(msg)
		}
	}
	driver, ok := tr.ar.c.drivers[tr.task.Driver].(drivers.ExecDriver)
	if !ok {
		fail(fmt.Sprintf("Template change script %s not run: driver %q cannot run commands in its tasks", cmd, tr.task.Driver))
		return
	}
	timeout := defaultScriptTimeout
	if s.Timeout != nil && *s.Timeout > 0 {
		timeout = *s.Timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// A kill ends the script with the task.
	ended := make(chan struct{})
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		select {
		case <-tr.killCh:
			cancel()
		case <-ended:
		}
	}()
	defer func() { close(ended); <-watcher }()
	code, err := driver.Exec(ctx, cfg, &drivers.ExecOptions{Command: append([]string{cmd}, s.Args...),
		Stdout: io.Discard, Stderr: io.Discard})
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		fail(fmt.Sprintf("Template change script %s did not end within %s", cmd, timeout))
	case err != nil:
		fail(fmt.Sprintf("Template change script %s failed: %v", cmd, err))
	case code != 0:
		fail(fmt.Sprintf("Template change script %s exited with code %d", cmd, code))
	default:
		tr.event(&structs.TaskEvent{Type: structs.TaskEventHookMessage,
			Message: fmt.Sprintf("Template successfully ran script %s", cmd)}, nil)
	}
}
