package nomad

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
)

func TestRetryJoin_GivesUpAfterRetryMax(t *testing.T) {
	logs := &lockedBuffer{}
	srv := testServer(t, func(c *Config) {
		c.RaftBindAddr = freeAddr(t)
		c.SerfBindAddr = freeAddr(t)
		c.EncryptKey = testClusterKey
		c.BootstrapExpect = 1
		c.RetryJoin = []string{"127.0.0.1:1"}
		c.RetryInterval = 10 * time.Millisecond
		c.RetryMaxAttempts = 3
		c.Logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Warn})
	})
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(logs.String(), "giving up joining the gossip pool") })
	must.Eq(t, 3, strings.Count(logs.String(), "joining the gossip pool failed; retrying"))
	must.True(t, srv.IsLeader())
}

func TestNewServer_JoiningNeedsASerfAddress(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RaftBindAddr = freeAddr(t)
	cfg.EncryptKey = testClusterKey
	cfg.RetryJoin = []string{"127.0.0.1:4648"}
	_, err := NewServer(cfg)
	must.ErrorContains(t, err, "needs a serf address")
}
