package drivers

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// JoinNetNS moves the calling goroutine's thread into the network namespace at path, for a
// child started next from it (a forked child inherits its thread's namespaces). The thread
// stays locked to the goroutine for good: it is no longer like the runtime's others, and
// dies with the goroutine. Shims call it before they start their task.
func JoinNetNS(path string) error {
	runtime.LockOSThread()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the allocation's network namespace: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("joining the allocation's network namespace: %w", err)
	}
	return nil
}
