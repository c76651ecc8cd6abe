package client

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// eventingDriver is the mock driver reporting progress while it starts, with background work
// the client must stop at shutdown.
type eventingDriver struct {
	drivers.Mock
	shutdowns *atomic.Int32
}

func (d eventingDriver) Start(cfg *drivers.TaskConfig) (drivers.TaskHandle, error) {
	cfg.Emit("Downloading image test:1")
	return d.Mock.Start(cfg)
}

func (d eventingDriver) Shutdown() { d.shutdowns.Add(1) }

// A driver's messages while it starts a task become the task's "Driver" events, and a driver
// with background work is shut down with the client.
func TestClient_DriverEventsAndShutdown(t *testing.T) {
	var shutdowns atomic.Int32
	servers := newFakeServers()
	c, err := New(&Config{
		Name: "test", AllocDir: t.TempDir(),
		Drivers:      []drivers.Driver{eventingDriver{shutdowns: &shutdowns}},
		MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond,
	}, servers)
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	<-c.Registered()

	servers.setAllocs(testAlloc("a1", structs.JobTypeBatch, mockTask("t", map[string]any{"run_for": "10ms"})))
	waitFor(t, "complete", reportedStatus(servers, "a1", structs.AllocClientStatusComplete))
	var driverEvents []*structs.TaskEvent
	for _, e := range servers.lastReport("a1").TaskStates["t"].Events {
		if e.Type == structs.TaskEventDriverMessage {
			driverEvents = append(driverEvents, e)
		}
	}
	must.Len(t, 1, driverEvents)
	must.Eq(t, "Downloading image test:1", driverEvents[0].DriverMessage)
	must.Eq(t, "Downloading image test:1", driverEvents[0].DisplayMessage)

	must.Eq(t, 0, shutdowns.Load())
	c.Shutdown()
	must.Eq(t, 1, shutdowns.Load())
}
