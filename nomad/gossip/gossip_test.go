package gossip

import (
	"net"
	"testing"

	"github.com/hashicorp/serf/serf"
	"github.com/shoenig/test/must"
)

func TestParseServer(t *testing.T) {
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
			p, ok := ParseServer(serf.Member{Name: "a.global", Addr: net.ParseIP("192.0.2.7"), Port: 4648, Tags: tc.tags, Status: serf.StatusAlive})
			must.Eq(t, tc.wantOK, ok)
			if ok {
				must.Eq(t, tc.wantAddr, p.RPCAddr)
				must.Eq(t, 3, p.Expect)
				must.Eq(t, "abc", p.ID)
			}
		})
	}
}

// Tags and ParseServer agree: what a server gossips is what the others read back.
func TestSelfTagsParseBack(t *testing.T) {
	self := Self{Name: "s1", ID: "id-1", Region: "eu", DC: "dc2", Build: "1.2.3", RPCAddr: "10.1.2.3:4647", BootstrapExpect: 1}
	tags, err := self.Tags()
	must.NoError(t, err)
	got, ok := ParseServer(serf.Member{Name: "s1.eu", Addr: net.ParseIP("192.0.2.9"), Tags: tags, Status: serf.StatusAlive})
	must.True(t, ok)
	must.Eq(t, "id-1", got.ID)
	must.Eq(t, "eu", got.Region)
	must.Eq(t, "dc2", got.DC)
	must.Eq(t, "10.1.2.3:4647", got.RPCAddr)
	must.Eq(t, 1, got.Expect)
	must.True(t, got.Bootstrap)

	_, err = Self{RPCAddr: "no-port"}.Tags()
	must.ErrorContains(t, err, "host:port")
}

// A nil pool is a server without gossip: every call answers as for a lone server.
func TestNilPoolIsALoneServer(t *testing.T) {
	var p *Pool
	must.Nil(t, p.Serf())
	must.Nil(t, p.RegionServers())
	_, err := p.Join([]string{"127.0.0.1:1"})
	must.ErrorIs(t, err, ErrNoGossip)
	must.NoError(t, p.ForceLeave("x", true))
	must.Eq(t, []string{"global"}, p.Regions("global"))
	must.NoError(t, p.Leave())
	must.NoError(t, p.Shutdown())
}
