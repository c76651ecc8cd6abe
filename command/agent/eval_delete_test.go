package agent

import (
	"testing"

	"github.com/shoenig/test/must"
)

// TestEvalDelete: refused while the broker runs, then an unknown ID is a 404 and a known one
// is deleted, with PauseEvalBroker set.
func TestEvalDelete(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	resp, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	_, err = c.Evaluations().Delete([]string{resp.EvalID}, nil)
	must.ErrorContains(t, err, "eval broker is enabled")

	cfg, _, err := c.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	cfg.SchedulerConfig.PauseEvalBroker = true
	out, _, err := c.Operator().SchedulerCASConfiguration(cfg.SchedulerConfig, nil)
	must.NoError(t, err)
	must.True(t, out.Updated)

	_, err = c.Evaluations().Delete([]string{"8E231CF4-CA48-43FF-B694-5801E69E22FA"}, nil)
	must.ErrorContains(t, err, "eval not found")
	wm, err := c.Evaluations().Delete([]string{resp.EvalID}, nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)
	_, _, err = c.Evaluations().Info(resp.EvalID, nil)
	must.ErrorContains(t, err, "eval not found")
}
