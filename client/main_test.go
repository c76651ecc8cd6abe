package client

import (
	"os"
	"testing"

	"github.com/nomadfork/nomad/client/drivers/execdriver"
)

// TestMain lets the test binary be an exec task's shim and init, as the agent's binary is.
func TestMain(m *testing.M) {
	if execdriver.IsInit() {
		execdriver.RunInit()
	}
	os.Exit(m.Run())
}
