package agent

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// TestClientOnlyAgent_ServesHTTPAPI: with ACLs on, the quick start and the purge governance
// run through a client-only agent's HTTP address: the servers decide on the caller's token
// exactly as when the request is sent to them, the allocation's logs and files are served by
// the agent that runs it, blocking queries and the event stream work through it, and
// /v1/agent/servers and /v1/agent/self describe its client.
func TestClientOnlyAgent_ServesHTTPAPI(t *testing.T) {
	ta, rpcAddr := newRPCServerAgent(t, func(c *Config) { c.ACL.Enabled = true })
	boot, _, err := ta.Client("").ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	root := boot.SecretID
	ca := newClientOnlyAgentWith(t, func(c *Config) { c.ACL.Enabled = true }, rpcAddr)
	through := func(token string) *api.Client {
		c, err := api.NewClient(&api.Config{Address: "http://" + ca.HTTPAddr(), SecretID: token})
		must.NoError(t, err)
		return c
	}
	deployer := clientToken(t, ta, root, "deployer",
		`namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs", "read-logs", "read-fs"] }`)
	purger := clientToken(t, ta, root, "purger",
		`namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs", "purge-job"] }`)
	dc, pc, rc, anon := through(deployer.SecretID), through(purger.SecretID), through(root), through("")

	// The event stream through the client agent, opened before anything is written.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	events, err := rc.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"web"}}, 0, nil)
	must.NoError(t, err)

	alloc := runningAlloc(t, dc, shJob("web", "service", "echo hello; echo oops >&2; exec sleep 600"))
	must.Eq(t, ca.Client().NodeID(), alloc.NodeID)

	t.Run("job status and list", func(t *testing.T) {
		job, _, err := dc.Jobs().Info("web", nil)
		must.NoError(t, err)
		must.Eq(t, "web", *job.ID)
		list, meta, err := dc.Jobs().List(nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, list)
		must.Positive(t, meta.LastIndex)
		_, _, err = anon.Jobs().List(nil)
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrHasPrefix(t, "Permission denied", body)
	})

	t.Run("a blocking query wakes on a write", func(t *testing.T) {
		_, meta, err := dc.Jobs().List(nil)
		must.NoError(t, err)
		type answer struct {
			ids   []string
			index uint64
			err   error
		}
		done := make(chan answer, 1)
		go func() {
			list, m, err := dc.Jobs().List(&api.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 30 * time.Second})
			a := answer{err: err}
			if err == nil {
				a.index = m.LastIndex
				for _, j := range list {
					a.ids = append(a.ids, j.ID)
				}
			}
			done <- a
		}()
		_, _, err = dc.Jobs().Register(testJob("second"), nil)
		must.NoError(t, err)
		select {
		case a := <-done:
			must.NoError(t, a.err)
			must.Greater(t, meta.LastIndex, a.index)
			must.SliceContains(t, a.ids, "second")
		case <-time.After(45 * time.Second):
			t.Fatal("the blocking query never answered")
		}
	})

	t.Run("logs and files of its own allocation", func(t *testing.T) {
		eventually(t, 10*time.Second, "the task's output", func() (bool, string) {
			out, err := officialLogs(t, dc, alloc, "sh", "stdout", false, "start", 0)
			if err != nil {
				return false, err.Error()
			}
			return out == "hello\n", out
		})
		entries, _, err := dc.AllocFS().List(alloc, "/", nil)
		must.NoError(t, err)
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name)
		}
		must.SliceContains(t, names, "alloc")
		_, err = officialLogs(t, anon, alloc, "sh", "stdout", false, "start", 0)
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrContains(t, body, "read-logs")
		_, _, err = pc.AllocFS().List(alloc, "/", nil)
		status, body = responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrContains(t, body, "read-fs")
	})

	t.Run("purge governance", func(t *testing.T) {
		_, _, err := dc.Jobs().Deregister("second", true, nil)
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrHasPrefix(t, "Permission denied", body)
		must.StrContains(t, body, "purge-job")
		_, _, err = dc.Jobs().Info("second", nil)
		must.NoError(t, err, must.Sprint("a refused purge leaves the job"))

		_, _, err = pc.Jobs().Deregister("second", true, nil)
		must.NoError(t, err)
		_, _, err = pc.Jobs().Info("second", nil)
		status, _ = responseError(t, err)
		must.Eq(t, http.StatusNotFound, status)
		records, _ := listPurged(t, pc, nil)
		must.SliceLen(t, 1, records)
		must.Eq(t, "second", records[0].JobID)
		must.Eq(t, map[string]string{"AccessorID": purger.AccessorID, "Name": "purger", "Type": "client"}, records[0].Actor)
	})

	t.Run("event stream refused without the capability", func(t *testing.T) {
		_, err := anon.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicJob: {"*"}}, 0, nil)
		must.ErrorContains(t, err, "403")
		must.ErrorContains(t, err, "Permission denied")
	})

	t.Run("event stream", func(t *testing.T) {
		for {
			select {
			case ev, ok := <-events:
				must.True(t, ok, must.Sprint("the stream ended"))
				must.NoError(t, ev.Err)
				for _, e := range ev.Events {
					if e.Topic == api.TopicJob && e.Key == "web" {
						return
					}
				}
			case <-ctx.Done():
				t.Fatal("no event of job web through the client agent")
			}
		}
	})

	t.Run("agent servers", func(t *testing.T) {
		servers, err := rc.Agent().Servers()
		must.NoError(t, err)
		must.Eq(t, []string{rpcAddr}, servers)
		_, err = anon.Agent().Servers()
		status, _ := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		err = dc.Agent().SetServers([]string{"127.0.0.1:1"})
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrContains(t, body, "agent write")

		// A dead address first: the client moves on to the live one. The list keeps the
		// order given (a name that sorts after the live address).
		must.NoError(t, rc.Agent().SetServers([]string{"localhost:1", rpcAddr}))
		servers, err = rc.Agent().Servers()
		must.NoError(t, err)
		must.Eq(t, []string{"localhost:1", rpcAddr}, servers)
		_, _, err = dc.Jobs().List(nil)
		must.NoError(t, err)
	})

	t.Run("agent members are its server's gossip pool", func(t *testing.T) {
		members, err := rc.Agent().Members()
		must.NoError(t, err)
		must.SliceLen(t, 1, members.Members)
		must.Eq(t, ta.Agent.config.Name+"."+ta.Agent.config.Region, members.Members[0].Name)
		_, err = anon.Agent().Members()
		status, body := responseError(t, err)
		must.Eq(t, http.StatusForbidden, status)
		must.StrContains(t, body, "node read")
	})

	t.Run("agent self describes the client", func(t *testing.T) {
		self, err := rc.Agent().Self()
		must.NoError(t, err)
		must.Eq(t, ca.Client().NodeID(), self.Stats["client"]["node_id"])
		must.Eq(t, "true", self.Stats["client"]["enabled"])
		must.MapNotContainsKey(t, self.Stats, "nomad")
		must.Eq(t, ca.config.Name, self.Member.Name)
		must.Eq(t, "client", self.Member.Tags["role"])
		must.True(t, strings.Contains(self.Stats["client"]["known_servers"], rpcAddr))
		// The official client wraps this error in its own words.
		_, err = anon.Agent().Self()
		must.ErrorContains(t, err, "403 (Permission denied: agent read required)")
	})
}

// TestClientOnlyAgent_TemplatesReadVariables: a client-only agent's templates read Nomad
// variables through its own HTTP API, with the task's workload identity, which the servers
// check.
func TestClientOnlyAgent_TemplatesReadVariables(t *testing.T) {
	ta, rpcAddr := newRPCServerAgent(t, func(c *Config) { c.ACL.Enabled = true })
	boot, _, err := ta.Client("").ACLTokens().Bootstrap(nil)
	must.NoError(t, err)
	ca := newClientOnlyAgentWith(t, func(c *Config) { c.ACL.Enabled = true }, rpcAddr)
	c, err := api.NewClient(&api.Config{Address: "http://" + ca.HTTPAddr(), SecretID: boot.SecretID})
	must.NoError(t, err)

	_, _, err = c.Variables().Create(&api.Variable{Path: "nomad/jobs/tmpl", Items: api.VariableItems{"greeting": "hello"}}, nil)
	must.NoError(t, err)
	job := templateJob("tmpl", "noop", `greeting={{ with nomadVar "nomad/jobs/tmpl" }}{{ .greeting }}{{ end }}`)
	alloc := runningAlloc(t, c, job)
	must.Eq(t, ca.Client().NodeID(), alloc.NodeID)
	eventually(t, 20*time.Second, "the rendered template in the task's output", func() (bool, string) {
		out, err := officialLogs(t, c, alloc, "app", "stdout", false, "start", 0)
		if err != nil {
			return false, err.Error()
		}
		return strings.HasPrefix(out, "start: greeting=hello env=hello\n"), out
	})
}
