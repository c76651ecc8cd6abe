package agent

import (
	"os"
	"testing"

	"github.com/nomadfork/nomad/client/drivers/execdriver"
)

// TestMain lets the test binary be an exec task's init, as the nomad binary is (see main.go).
func TestMain(m *testing.M) {
	if execdriver.IsInit() {
		execdriver.RunInit()
	}
	os.Exit(m.Run())
}
