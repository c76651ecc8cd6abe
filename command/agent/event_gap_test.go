package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestEventStream_GapFrame: a stream asked to start after an index whose successors are no
// longer retained says so in a frame before the first batch, naming the oldest index still
// available, instead of skipping in silence; the official client reads that frame as a
// heartbeat.
func TestEventStream_GapFrame(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) { c.Server.EventBufferSize = 2 })
	c := ta.Client("")
	var indexes []uint64
	for i := range 5 {
		resp, _, err := c.Jobs().Register(testJob(fmt.Sprintf("job-%d", i)), nil)
		must.NoError(t, err)
		indexes = append(indexes, resp.JobModifyIndex)
	}

	status, _, s := openRawEventStream(t, ta, "", fmt.Sprintf("topic=Job&index=%d", indexes[0]))
	must.Eq(t, http.StatusOK, status)
	line, ok := s.next()
	must.True(t, ok)
	must.Eq(t, "{}", line)
	line, ok = s.next()
	must.True(t, ok)
	var frame struct {
		Index  uint64
		Events []json.RawMessage
		Gap    *structs.EventGap
	}
	must.NoError(t, json.Unmarshal([]byte(line), &frame), must.Sprintf("line: %s", line))
	must.Eq(t, uint64(0), frame.Index)
	must.SliceEmpty(t, frame.Events)
	must.NotNil(t, frame.Gap, must.Sprintf("expected a gap frame, got %s", line))
	must.Eq(t, indexes[0]-1, frame.Gap.LastIndex, must.Sprint("the subscriber asked to start at indexes[0]: it had everything before"))
	must.Eq(t, structs.EventGapIndexNotRetained, frame.Gap.Reason)
	must.Greater(t, indexes[1], frame.Gap.OldestIndex)

	batch, _ := s.nextBatch()
	must.Eq(t, frame.Gap.OldestIndex, batch.Index, must.Sprint("the stream resumes at the oldest index the gap named"))

	// Starting from a retained index tells of no gap.
	status, _, s = openRawEventStream(t, ta, "", fmt.Sprintf("topic=Job&index=%d", indexes[3]))
	must.Eq(t, http.StatusOK, status)
	batch, line = s.nextBatch()
	must.StrNotContains(t, line, "Gap")
	must.Eq(t, indexes[3], batch.Index, must.Sprint("index is inclusive"))
}
