package drivers

import (
	"os"

	"github.com/nomadfork/nomad/client/allocdir"
)

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
