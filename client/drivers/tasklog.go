package drivers

import (
	"fmt"
	"os"

	"github.com/nomadfork/nomad/client/allocdir"
)

// OpenTaskLogs opens a task's stdout and stderr files (OpenTaskLog); neither is left open
// when the other fails.
func OpenTaskLogs(cfg *TaskConfig) (stdout, stderr *os.File, err error) {
	stdout, err = OpenTaskLog(cfg.AllocDir, cfg.StdoutPath)
	if err != nil {
		return nil, nil, fmt.Errorf("opening stdout file: %w", err)
	}
	stderr, err = OpenTaskLog(cfg.AllocDir, cfg.StderrPath)
	if err != nil {
		_ = stdout.Close()
		return nil, nil, fmt.Errorf("opening stderr file: %w", err)
	}
	return stdout, stderr, nil
}

// OpenTaskLog opens a task's log file for appending, inside allocDir: a link the task put in
// its place cannot make the agent write to a file of the host. An empty path is a task whose
// logs are disabled (`logs { disabled = true }`): its output goes to the null device, and no
// file is created.
func OpenTaskLog(allocDir, path string) (*os.File, error) {
	if path == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	return allocdir.OpenFile(allocDir, path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}
