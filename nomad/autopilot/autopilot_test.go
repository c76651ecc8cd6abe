package autopilot

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/serf/serf"
	"github.com/nomadfork/nomad/nomad/gossip"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// fakeCluster is a Raft configuration of voters, some of which gossip calls failed; removals
// are recorded instead of made.
type fakeCluster struct {
	voters  []string
	failed  map[string]bool
	conf    *structs.AutopilotConfig
	removed []string
}

type confFuture struct{ c raft.Configuration }

func (f confFuture) Error() error                      { return nil }
func (f confFuture) Index() uint64                     { return 1 }
func (f confFuture) Configuration() raft.Configuration { return f.c }

func (c *fakeCluster) GetConfiguration() raft.ConfigurationFuture {
	var conf raft.Configuration
	for _, id := range c.voters {
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(id), Address: raft.ServerAddress(id + ":4647")})
	}
	return confFuture{conf}
}

func (c *fakeCluster) AddVoter(raft.ServerID, raft.ServerAddress, uint64, time.Duration) raft.IndexFuture {
	panic("autopilot's cleanup promotes no one")
}

func (c *fakeCluster) Raft() Raft                       { return c }
func (c *fakeCluster) Config() *structs.AutopilotConfig { return c.conf }
func (c *fakeCluster) Local() Local                     { return Local{ID: "s0"} }
func (c *fakeCluster) Leader() string                   { return "s0:4647" }
func (c *fakeCluster) Gossip() bool                     { return true }
func (c *fakeCluster) LocalStats() structs.RaftStats    { return structs.RaftStats{} }
func (c *fakeCluster) Logger() hclog.Logger             { return hclog.NewNullLogger() }
func (c *fakeCluster) Membership() Membership           { return c }
func (c *fakeCluster) WarnOnce(string, string, ...any)  {}
func (c *fakeCluster) MayRetry(string) bool             { return true }
func (c *fakeCluster) RemoteStats(string) (structs.RaftStats, error) {
	return structs.RaftStats{}, nil
}

func (c *fakeCluster) Servers() []*gossip.Server {
	var out []*gossip.Server
	for _, id := range c.voters {
		status := serf.StatusAlive
		if c.failed[id] {
			status = serf.StatusFailed
		}
		out = append(out, &gossip.Server{ID: id, Name: id, Status: status})
	}
	return out
}

func (c *fakeCluster) RemoveIfGone(id, _, _, _ string) bool {
	c.removed = append(c.removed, id)
	return true
}

// TestCleanup_NeverRemovesWhatAQuorumNeeds: failed voters are removed only while they are a
// minority of the voters, and never below min_quorum.
func TestCleanup_NeverRemovesWhatAQuorumNeeds(t *testing.T) {
	cases := []struct {
		name      string
		voters    int
		failed    []string
		minQuorum uint
		want      []string
	}{
		{name: "a minority failed", voters: 5, failed: []string{"s3", "s4"}, want: []string{"s3", "s4"}},
		{name: "a majority failed", voters: 5, failed: []string{"s2", "s3", "s4"}},
		{name: "min_quorum holds the last one", voters: 5, failed: []string{"s3", "s4"}, minQuorum: 4, want: []string{"s3"}},
		{name: "nothing failed", voters: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCluster{failed: map[string]bool{}, conf: structs.DefaultAutopilotConfig()}
			c.conf.MinQuorum = tc.minQuorum
			for i := range tc.voters {
				c.voters = append(c.voters, fmt.Sprintf("s%d", i))
			}
			for _, id := range tc.failed {
				c.failed[id] = true
			}
			New(c).Cleanup()
			slices.Sort(c.removed)
			must.Eq(t, tc.want, c.removed)
		})
	}
}
