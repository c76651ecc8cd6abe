package client

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestClient_ReportsAgainWhenMarkedUnknown: when the servers mark a running allocation
// unknown (its node was disconnected), the client reports it again, though nothing changed
// on its side, so that the servers see it reconnect.
func TestClient_ReportsAgainWhenMarkedUnknown(t *testing.T) {
	_, s := testClient(t)
	a := testAlloc("a1", structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
	s.setAllocs(a)
	waitFor(t, "a1 running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	before := s.reportCount("a1")

	unknown := *a
	unknown.ClientStatus = structs.AllocClientStatusUnknown
	s.setAllocs(&unknown)
	waitFor(t, "a1 reported again", func() bool { return s.reportCount("a1") > before })
	must.Eq(t, structs.AllocClientStatusRunning, s.lastReport("a1").ClientStatus)
}
