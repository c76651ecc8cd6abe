package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nomadfork/nomad/client/allocdir"
)

// writeDispatchPayload writes a dispatched job's payload to the file the task's
// dispatch_payload block names, relative to the task's local directory, before the task
// starts. The path is built element by element through allocdir, and written through an
// os.Root of the task directory, so neither a crafted name nor a link the task left behind
// (a restart) can put it outside. A job without a payload or block writes nothing.
func (tr *taskRunner) writeDispatchPayload(taskDir string) error {
	dp := tr.task.DispatchPayload
	if dp == nil || dp.File == "" || tr.alloc.Job == nil || len(tr.alloc.Job.Payload) == 0 {
		return nil
	}
	elems := strings.Split(filepath.ToSlash(dp.File), "/")
	path, err := allocdir.Join(taskDir, append([]string{"local"}, elems...)...)
	if err != nil {
		return fmt.Errorf("dispatch_payload file %q: %w", dp.File, err)
	}
	if err := allocdir.MkdirAll(taskDir, filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("dispatch_payload directory: %w", err)
	}
	f, err := allocdir.OpenFile(taskDir, path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("dispatch_payload file: %w", err)
	}
	if _, err := f.Write(tr.alloc.Job.Payload); err != nil {
		f.Close()
		return fmt.Errorf("writing dispatch_payload file: %w", err)
	}
	return f.Close()
}
