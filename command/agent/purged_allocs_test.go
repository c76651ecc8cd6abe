package agent

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestClient_PurgeKeepsHowAllocationsEnded: a job purged while its allocation runs. The
// client kills the task and reports its end; the server takes that report into the purge
// record and publishes it as AllocationUpdated, with the job gone (upstream loses it).
func TestClient_PurgeKeepsHowAllocationsEnded(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "web", map[string]int{"running": 1})
	pid := taskPIDs(t, ta, allocs)[0]

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicAllocation: {allocs[0].ID}}, 0, nil)
	must.NoError(t, err)

	_, _, err = c.Jobs().DeregisterOpts("web", &api.DeregisterOptions{Purge: true}, nil)
	must.NoError(t, err)
	processGone(t, pid)

	records, _ := listPurged(t, c, nil)
	must.Len(t, 1, records)
	var rec structs.PurgeRecord
	eventually(t, 10*time.Second, "the purge record to hold the allocation's end", func() (bool, string) {
		_, err := c.Raw().Query("/v1/jobs/purged/"+records[0].ID, &rec, nil)
		if err != nil {
			return false, err.Error()
		}
		if len(rec.Allocations) != 1 {
			return false, "no allocation in the record"
		}
		a := rec.Allocations[0]
		return a.ClientStatus == structs.AllocClientStatusComplete && a.TaskStates["sleep"] != nil &&
			a.TaskStates["sleep"].State == structs.TaskStateDead, a.ClientStatus
	})
	must.Eq(t, allocs[0].ID, rec.Allocations[0].ID)

	deadline := time.After(10 * time.Second)
	for {
		select {
		case <-deadline:
			t.Fatal("no AllocationUpdated event with the allocation's end after the purge")
		case batch := <-stream:
			must.NoError(t, batch.Err)
			for _, e := range batch.Events {
				alloc, err := e.Allocation()
				must.NoError(t, err)
				if e.Type == "AllocationUpdated" && alloc != nil && alloc.ClientStatus == structs.AllocClientStatusComplete {
					must.Eq(t, "web", alloc.JobID)
					must.Nil(t, alloc.Job)
					return
				}
			}
		}
	}
}
