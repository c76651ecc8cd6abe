package drivers

import (
	"context"
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

// NetworkSandboxer is a driver whose tasks cannot join a network namespace by its path (the
// docker engine joins only another container's): for a bridge-mode allocation with such a
// task, the client has the driver hold the namespace in a sandbox (docker's pause container),
// attaches that namespace to the bridge, and the driver's tasks join the sandbox.
type NetworkSandboxer interface {
	// CreateSandbox starts the allocation's sandbox, or finds it running, and returns the
	// path of its network namespace.
	CreateSandbox(ctx context.Context, allocID string) (string, error)
	// DestroySandbox removes it; one already gone is not an error.
	DestroySandbox(ctx context.Context, allocID string) error
	// RemoveSandboxes removes the sandboxes of a previous run of the agent whose allocation
	// keep does not name.
	RemoveSandboxes(ctx context.Context, keep func(allocID string) bool) (int, error)
}
