package command

import (
	"net/http"
	"testing"

	"github.com/shoenig/test/must"
)

const membersBody = `{"ServerName":"a","ServerRegion":"global","ServerDC":"dc1","Members":[
{"Name":"b.global","Addr":"10.0.0.2","Port":4648,"Status":"failed","ProtocolCur":2,
 "Tags":{"role":"nomad","region":"global","dc":"dc1","rpc_addr":"10.0.0.2","port":"4647","raft_vsn":"3","build":"0.1.0-fork"}},
{"Name":"a.global","Addr":"10.0.0.1","Port":4648,"Status":"alive","ProtocolCur":2,
 "Tags":{"role":"nomad","region":"global","dc":"dc1","rpc_addr":"10.0.0.1","port":"4647","raft_vsn":"3","build":"0.1.0-fork"}},
{"Name":"c.eu","Addr":"10.1.0.1","Port":4648,"Status":"alive","ProtocolCur":2,
 "Tags":{"role":"nomad","region":"eu","dc":"dc9","rpc_addr":"10.1.0.1","port":"4647","raft_vsn":"3","build":"0.1.0-fork"}}]}`

func TestServerCommands(t *testing.T) {
	members := map[string]route{
		"GET /v1/agent/members": jsonBody(membersBody),
		"GET /v1/status/leader": jsonBody(`"10.0.0.1:4647"`),
	}
	runCLICases(t, []cliCase{
		{
			name:   "members",
			routes: members,
			args:   []string{"server", "members"},
			stdout: "Name      Address   Port  Status  Leader   Raft Version  Build       Datacenter  Region\n" +
				"a.global  10.0.0.1  4648  alive   true     3             0.1.0-fork  dc1         global\n" +
				"b.global  10.0.0.2  4648  failed  false    3             0.1.0-fork  dc1         global\n" +
				"c.eu      10.1.0.1  4648  alive   unknown  3             0.1.0-fork  dc9         eu\n",
		},
		{
			name:   "members detailed",
			routes: members,
			args:   []string{"server", "members", "-detailed"},
			stdout: "Name      Address   Port  Status  Protocol  Tags\n" +
				"a.global  10.0.0.1  4648  alive   2         build=0.1.0-fork,dc=dc1,port=4647,raft_vsn=3,region=global,role=nomad,rpc_addr=10.0.0.1\n" +
				"b.global  10.0.0.2  4648  failed  2         build=0.1.0-fork,dc=dc1,port=4647,raft_vsn=3,region=global,role=nomad,rpc_addr=10.0.0.2\n" +
				"c.eu      10.1.0.1  4648  alive   2         build=0.1.0-fork,dc=dc9,port=4647,raft_vsn=3,region=eu,role=nomad,rpc_addr=10.1.0.1\n",
		},
		{
			name:   "members refused",
			routes: map[string]route{"GET /v1/agent/members": textError(http.StatusForbidden, "Permission denied: node read required")},
			args:   []string{"server", "members"},
			code:   1,
			stderr: "Error querying servers: Unexpected response code: 403 (Permission denied: node read required)\n",
		},
		{
			name:   "join",
			routes: map[string]route{"PUT /v1/agent/join": jsonBody(`{"num_joined":2,"error":""}`)},
			args:   []string{"server", "join", "10.0.0.2", "10.0.0.3:4648"},
			stdout: "Joined 2 servers successfully\n",
		},
		{
			name:   "join fails",
			routes: map[string]route{"PUT /v1/agent/join": jsonBody(`{"num_joined":0,"error":"no route"}`)},
			args:   []string{"server", "join", "10.0.0.9"},
			code:   1,
			stderr: "Error joining: failed joining: no route\n",
		},
		{
			name:   "join needs an address",
			args:   []string{"server", "join"},
			code:   1,
			stderr: "This command takes at least one argument: <addr>\n",
		},
		{
			name:   "force-leave",
			routes: map[string]route{"PUT /v1/agent/force-leave": jsonBody(`null`)},
			args:   []string{"server", "force-leave", "-prune", "b.global"},
		},
		{
			name:   "force-leave needs a node",
			args:   []string{"server", "force-leave"},
			code:   1,
			stderr: "This command takes one argument: <node>\n",
		},
	})
}

func TestServerJoinAndForceLeave_Requests(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"PUT /v1/agent/join":        jsonBody(`{"num_joined":2,"error":""}`),
		"PUT /v1/agent/force-leave": jsonBody(`null`),
	})
	code, _, errOut := runCLI(t, fa.srv.URL, "", "server", "join", "10.0.0.2", "10.0.0.3:4648")
	must.Eq(t, 0, code, must.Sprint(errOut))
	reqs := fa.find("PUT", "/v1/agent/join")
	must.Len(t, 1, reqs)
	must.Eq(t, []string{"10.0.0.2", "10.0.0.3:4648"}, reqs[0].Query["address"])

	code, _, errOut = runCLI(t, fa.srv.URL, "", "server", "force-leave", "-prune", "b.global")
	must.Eq(t, 0, code, must.Sprint(errOut))
	reqs = fa.find("PUT", "/v1/agent/force-leave")
	must.Len(t, 1, reqs)
	must.Eq(t, []string{"b.global"}, reqs[0].Query["node"])
	must.Eq(t, []string{"1"}, reqs[0].Query["prune"])
}
