package command

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

// TestEventStream_PrintsTheEventsTime reads a job registration's event from an agent's stream
// and checks that its line starts with the job's submit time, not the time it was received.
func TestEventStream_PrintsTheEventsTime(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	c := ta.Client("")
	code, out, errOut := runCLIWithin(t, 30*time.Second, ta.URL(), "job", "run", "-detach", writeFile(t, "example.nomad.hcl", exampleHCL))
	must.Zero(t, code, must.Sprint(out, errOut))
	job, _, err := c.Jobs().Info("example", nil)
	must.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"example"}}, 0, nil)
	must.NoError(t, err)
	var line string
	for line == "" {
		select {
		case evs := <-stream:
			must.NoError(t, evs.Err)
			for _, e := range evs.Events {
				if e.Type == "JobRegistered" {
					line = formatEventLine(e, time.Unix(0, 0))
				}
			}
		case <-ctx.Done():
			t.Fatal("no JobRegistered event")
		}
	}
	want := formatTime(time.Unix(0, *job.SubmitTime).UTC())
	must.True(t, strings.HasPrefix(line, want+" "), must.Sprintf("line %q, want the time %s", line, want))
}
