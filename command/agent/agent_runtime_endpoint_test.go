package agent

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestAgentRuntime_HealthAndProfiles(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)

	health, err := c.Agent().Health()
	must.NoError(t, err)
	must.True(t, health.Server.Ok)
	must.Nil(t, health.Client)

	q := &api.QueryOptions{AuthToken: root}
	heap, err := c.Agent().Lookup("heap", api.PprofOptions{}, q)
	must.NoError(t, err)
	must.SliceNotEmpty(t, heap)
	cpu, err := c.Agent().CPUProfile(api.PprofOptions{Seconds: 1}, q)
	must.NoError(t, err)
	must.SliceNotEmpty(t, cpu)

	_, err = c.Agent().Lookup("invalid", api.PprofOptions{}, q)
	must.ErrorContains(t, err, "Unexpected response code: 404")
	_, err = c.Agent().CPUProfile(api.PprofOptions{Seconds: 1, ServerID: "unknown.global"}, q)
	must.ErrorContains(t, err, "500 (unknown Nomad server unknown.global)")
	_, err = c.Agent().CPUProfile(api.PprofOptions{Seconds: 100000}, q)
	must.ErrorContains(t, err, "400 (invalid seconds")
	// Without a token: refused, as any agent write.
	_, err = ta.Client("").Agent().Lookup("heap", api.PprofOptions{}, nil)
	must.ErrorContains(t, err, "403 (Permission denied")
}

func TestAgentRuntime_ProfilesNeedEnableDebugWithoutACLs(t *testing.T) {
	// -dev turns enable_debug on, as upstream's does: turn it off again.
	ta := NewTestAgent(t, func(c *Config) { c.EnableDebug = false })
	_, err := ta.Client("").Agent().Lookup("heap", api.PprofOptions{}, nil)
	must.ErrorContains(t, err, "403 (Permission denied: agent profiles need enable_debug")
	debug := NewTestAgent(t, func(c *Config) { c.EnableDebug = true })
	heap, err := debug.Client("").Agent().Lookup("heap", api.PprofOptions{}, nil)
	must.NoError(t, err)
	must.SliceNotEmpty(t, heap)
}

// TestAgentRuntime_SchedulerWorkerConfig: 0 schedulers pauses the worker (an evaluation stays
// pending), 1 resumes it; a bad configuration is a 400 and changes nothing.
func TestAgentRuntime_SchedulerWorkerConfig(t *testing.T) {
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Plugins = append(c.Plugins, &PluginConfig{Name: "raw_exec", Config: map[string]any{"enabled": true}})
	})
	c := ta.Client("")
	cfg, err := c.Agent().GetSchedulerWorkerConfig(nil)
	must.NoError(t, err)
	must.Eq(t, 1, cfg.NumSchedulers)
	must.SliceContainsAll(t, []string{"batch", "system", "sysbatch", "service", "_core"}, cfg.EnabledSchedulers)

	for _, bad := range []api.SchedulerWorkerPoolArgs{
		{NumSchedulers: -1, EnabledSchedulers: []string{"_core"}},
		{NumSchedulers: 1, EnabledSchedulers: []string{"service"}},
		{NumSchedulers: 1, EnabledSchedulers: []string{"_core", "nope"}},
	} {
		_, err := c.Agent().SetSchedulerWorkerConfig(bad, nil)
		// The bare body upstream answers: its client matches it whole.
		must.EqError(t, err, "Unexpected response code: 400 (Invalid request)")
	}

	paused, err := c.Agent().SetSchedulerWorkerConfig(api.SchedulerWorkerPoolArgs{NumSchedulers: 0, EnabledSchedulers: []string{"_core", "service"}}, nil)
	must.NoError(t, err)
	must.Eq(t, 0, paused.NumSchedulers)
	info, err := c.Agent().GetSchedulerWorkersInfo(nil)
	must.NoError(t, err)
	must.Len(t, 1, info.Schedulers)
	must.Eq(t, "Paused", info.Schedulers[0].Status)

	resp, _, err := c.Jobs().Register(testJob("paused"), nil)
	must.NoError(t, err)
	time.Sleep(300 * time.Millisecond) // a paused worker must not take it in this time
	eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
	must.NoError(t, err)
	must.Eq(t, "pending", eval.Status)

	_, err = c.Agent().SetSchedulerWorkerConfig(api.SchedulerWorkerPoolArgs{NumSchedulers: 1, EnabledSchedulers: []string{"_core", "service"}}, nil)
	must.NoError(t, err)
	eventually(t, 10*time.Second, "the evaluation to complete once the worker resumes", func() (bool, string) {
		e, _, err := c.Evaluations().Info(resp.EvalID, nil)
		if err != nil {
			return false, err.Error()
		}
		return e.Status == "complete", e.Status
	})
}
