//go:build !linux

package execdriver

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/nomadfork/nomad/client/drivers"
)

var errNotLinux = errors.New("exec driver is only supported on Linux")

// Start implements drivers.Driver; the fingerprint already said the driver is undetected.
func (d *Driver) Start(*drivers.TaskConfig) (drivers.TaskHandle, error) { return nil, errNotLinux }

// Exec implements drivers.ExecDriver.
func (d *Driver) Exec(context.Context, *drivers.TaskConfig, *drivers.ExecOptions) (int, error) {
	return 0, errNotLinux
}

// RunInit exits: there is no task init off Linux.
func RunInit() {
	fmt.Fprintln(os.Stderr, errNotLinux)
	os.Exit(127)
}

// Recover implements drivers.Recoverer; no exec task runs off Linux.
func (d *Driver) Recover(*drivers.TaskConfig, *drivers.HandleState) (drivers.TaskHandle, error) {
	return nil, errNotLinux
}
