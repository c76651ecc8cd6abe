package nomad

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/serf/serf"
	"github.com/shoenig/test/must"
)

func TestParseServerMember(t *testing.T) {
	good := map[string]string{"role": "nomad", "id": "abc", "region": "global", "dc": "dc1", "port": "4647", "rpc_addr": "10.0.0.1", "expect": "3"}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for kk, vv := range good {
			out[kk] = vv
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name     string
		tags     map[string]string
		wantOK   bool
		wantAddr string
	}{
		{name: "server", tags: good, wantOK: true, wantAddr: "10.0.0.1:4647"},
		{name: "no rpc_addr falls back to the gossip address", tags: with("rpc_addr", ""), wantOK: true, wantAddr: "192.0.2.7:4647"},
		{name: "not a nomad server", tags: with("role", "consul")},
		{name: "no id", tags: with("id", "")},
		{name: "no port", tags: with("port", "")},
		{name: "bad port", tags: with("port", "70000")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := parseServerMember(serf.Member{Name: "a.global", Addr: net.ParseIP("192.0.2.7"), Port: 4648, Tags: tc.tags, Status: serf.StatusAlive})
			must.Eq(t, tc.wantOK, ok)
			if ok {
				must.Eq(t, tc.wantAddr, p.RPCAddr)
				must.Eq(t, 3, p.Expect)
				must.Eq(t, "abc", p.ID)
			}
		})
	}
}

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
