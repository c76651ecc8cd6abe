package agent

import (
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// gossipCluster starts three servers that find each other through gossip and waits until the
// first (bootstrap_expect 1) has made the other two voters: they join as non-voters and
// autopilot promotes them after server_stabilization_time, set short here.
func gossipCluster(t *testing.T) []*gossipAgent {
	t.Helper()
	first := startGossipAgent(t, "first", gossipTestKey, 1, nil)
	waitFor(t, 10*time.Second, first.Server().LeaderReady)
	c := first.client(t)
	conf, _, err := c.Operator().AutopilotGetConfiguration(nil)
	must.NoError(t, err)
	conf.ServerStabilizationTime = 300 * time.Millisecond
	_, err = c.Operator().AutopilotSetConfiguration(conf, nil)
	must.NoError(t, err)

	second := startGossipAgent(t, "second", gossipTestKey, 0, []string{first.serfAddr})
	third := startGossipAgent(t, "third", gossipTestKey, 0, []string{first.serfAddr})
	waitFor(t, 15*time.Second, func() bool {
		rc, err := c.Operator().RaftGetConfiguration(nil)
		if err != nil || len(rc.Servers) != 3 {
			return false
		}
		for _, s := range rc.Servers {
			if !s.Voter {
				return false
			}
		}
		return true
	})
	return []*gossipAgent{first, second, third}
}

func TestOperatorEndpoint_RaftConfigurationAndRemovePeer(t *testing.T) {
	agents := gossipCluster(t)
	op := agents[0].client(t).Operator()

	conf, err := op.RaftGetConfiguration(nil)
	must.NoError(t, err)
	must.Len(t, 3, conf.Servers)
	byNode := map[string]*api.RaftServer{}
	for _, s := range conf.Servers {
		byNode[s.Node] = s
		must.True(t, s.Voter)
		must.Eq(t, "3", s.RaftProtocol)
	}
	must.MapContainsKeys(t, byNode, []string{"first.global", "second.global", "third.global"})
	must.True(t, byNode["first.global"].Leader)
	must.False(t, byNode["second.global"].Leader)
	must.Eq(t, agents[1].Server().Config().NodeID, byNode["second.global"].ID)
	must.Eq(t, agents[1].Config().Advertise.RPC, byNode["second.global"].Address)

	// Followers answer too (forwarded to the leader).
	fromFollower, err := agents[2].client(t).Operator().RaftGetConfiguration(nil)
	must.NoError(t, err)
	must.Len(t, 3, fromFollower.Servers)

	err = op.RaftRemovePeerByID("nope", nil)
	must.ErrorContains(t, err, `id "nope" was not found in the Raft configuration`)
	err = op.RaftRemovePeerByAddress("10.0.0.1:4647", nil)
	must.ErrorContains(t, err, `address "10.0.0.1:4647" was not found in the Raft configuration`)

	// Stop the third's gossip first so the leader does not add it straight back.
	agents[2].Shutdown()
	must.NoError(t, op.RaftRemovePeerByID(byNode["third.global"].ID, nil))
	conf, err = op.RaftGetConfiguration(nil)
	must.NoError(t, err)
	must.Len(t, 2, conf.Servers)
	for _, s := range conf.Servers {
		must.NotEq(t, "third.global", s.Node)
	}
}

func TestOperatorEndpoint_AutopilotConfigurationAndHealth(t *testing.T) {
	agents := gossipCluster(t)
	op := agents[0].client(t).Operator()

	conf, _, err := op.AutopilotGetConfiguration(nil)
	must.NoError(t, err)
	must.True(t, conf.CleanupDeadServers)
	must.Eq(t, 200*time.Millisecond, conf.LastContactThreshold)
	must.Eq(t, uint64(250), conf.MaxTrailingLogs)
	must.Eq(t, 300*time.Millisecond, conf.ServerStabilizationTime) // gossipCluster's

	// Stored through Raft: every server reads it back.
	conf.LastContactThreshold = 2 * time.Second
	conf.MinQuorum = 3
	_, err = op.AutopilotSetConfiguration(conf, nil)
	must.NoError(t, err)
	for _, a := range agents {
		a := a
		waitFor(t, 5*time.Second, func() bool {
			got, _, err := a.client(t).Operator().AutopilotGetConfiguration(&api.QueryOptions{AllowStale: true})
			return err == nil && got.LastContactThreshold == 2*time.Second && got.MinQuorum == 3
		})
	}

	// CAS: a stale ModifyIndex loses and changes nothing; the current one wins.
	current, _, err := op.AutopilotGetConfiguration(nil)
	must.NoError(t, err)
	stale := *current
	stale.ModifyIndex--
	stale.MaxTrailingLogs = 1
	ok, _, err := op.AutopilotCASConfiguration(&stale, nil)
	must.NoError(t, err)
	must.False(t, ok)
	current.MaxTrailingLogs = 500
	ok, _, err = op.AutopilotCASConfiguration(current, nil)
	must.NoError(t, err)
	must.True(t, ok)
	got, _, err := op.AutopilotGetConfiguration(nil)
	must.NoError(t, err)
	must.Eq(t, uint64(500), got.MaxTrailingLogs)

	var health *api.OperatorHealthReply
	waitFor(t, 10*time.Second, func() bool {
		health, _, err = op.AutopilotServerHealth(nil)
		return err == nil && health.Healthy
	})
	must.Len(t, 3, health.Servers)
	must.Len(t, 3, health.Voters)
	must.Eq(t, 1, health.FailureTolerance)
	must.Eq(t, agents[0].Server().Config().NodeID, health.Leader)
	for _, s := range health.Servers {
		must.True(t, s.Healthy)
		must.True(t, s.Voter)
		must.Eq(t, "alive", s.SerfStatus)
		must.Positive(t, s.LastIndex)
		must.Positive(t, s.LastTerm)
		must.False(t, s.StableSince.IsZero())
	}

	// min_quorum 3 keeps a failed server in Raft, and the cluster reports it unhealthy (429,
	// which the client returns as an error).
	agents[2].Shutdown()
	waitFor(t, 20*time.Second, func() bool {
		_, _, err := op.AutopilotServerHealth(nil)
		return err != nil
	})
	_, _, err = op.AutopilotServerHealth(nil)
	must.ErrorContains(t, err, "429")
	peers, err := agents[0].client(t).Status().Peers()
	must.NoError(t, err)
	must.Len(t, 3, peers)
}

func TestOperatorEndpoint_BadInput(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, err := c.Raw().Delete("/v1/operator/raft/peer", nil, nil)
	must.ErrorContains(t, err, "400")
	_, err = c.Raw().Delete("/v1/operator/raft/peer?id=a&address=b", nil, nil)
	must.ErrorContains(t, err, "exactly one")
	_, err = c.Raw().Write("/v1/operator/autopilot/configuration?cas=x", &api.AutopilotConfiguration{}, nil, nil)
	must.ErrorContains(t, err, "cas")
	_, err = c.Raw().Write("/v1/operator/autopilot/configuration", map[string]any{"LastContactThreshold": "-1s"}, nil, nil)
	must.ErrorContains(t, err, "LastContactThreshold")
}

func TestOperatorEndpoint_AutopilotDefaults(t *testing.T) {
	ta := NewTestAgent(t, nil)
	conf, _, err := ta.Client("").Operator().AutopilotGetConfiguration(nil)
	must.NoError(t, err)
	must.True(t, conf.CleanupDeadServers)
	must.Eq(t, 200*time.Millisecond, conf.LastContactThreshold)
	must.Eq(t, uint64(250), conf.MaxTrailingLogs)
	must.Zero(t, conf.MinQuorum)
	must.Eq(t, 10*time.Second, conf.ServerStabilizationTime)
	must.Zero(t, conf.ModifyIndex)
}
