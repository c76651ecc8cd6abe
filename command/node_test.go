package command

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const (
	nodeA = "5f7e6b1c-1111-2222-3333-444455556666"
	nodeB = "5f7e9999-aaaa-bbbb-cccc-ddddeeeeffff"
)

const nodeListBody = `[{"Address":"10.0.0.1","ID":"` + nodeA + `","Datacenter":"dc1","Name":"alpha","NodeClass":"",` +
	`"NodePool":"default","Version":"0.1.0","Drain":false,"SchedulingEligibility":"eligible","Status":"ready","CreateIndex":5},` +
	`{"Address":"10.0.0.2","ID":"` + nodeB + `","Datacenter":"dc2","Name":"beta","NodeClass":"gpu",` +
	`"NodePool":"gpus","Version":"0.1.0","Drain":true,"SchedulingEligibility":"ineligible","Status":"ready","CreateIndex":6}]`

const nodeABody = `{"ID":"` + nodeA + `","Name":"alpha","Datacenter":"dc1","NodePool":"default","Status":"ready",` +
	`"SchedulingEligibility":"eligible","Drivers":{"mock_driver":{"Detected":true,"Healthy":true}},"Meta":{"rack":"r1"}}`

func nodeRoutes(extra map[string]route) map[string]route {
	routes := map[string]route{
		"GET /v1/nodes":                          jsonBody(nodeListBody),
		"GET /v1/node/" + nodeA:                  jsonBody(nodeABody),
		"GET /v1/node/" + nodeA + "/allocations": jsonBody(`[]`),
		"GET /v1/client/stats":                   jsonBody(`{"Uptime":3600,"CPUTicksConsumed":250,"Memory":{"Total":8589934592,"Used":1073741824}}`),
	}
	for k, v := range extra {
		routes[k] = v
	}
	return routes
}

func TestNodeStatus(t *testing.T) {
	runCLICases(t, []cliCase{
		{
			name:   "list",
			routes: nodeRoutes(nil),
			args:   []string{"node", "status"},
			stdout: "ID        Node Pool  DC   Name   Class   Drain  Eligibility  Status\n" +
				"5f7e6b1c  default    dc1  alpha  <none>  false  eligible     ready\n" +
				"5f7e9999  gpus       dc2  beta   gpu     true   ineligible   ready\n",
		},
		{
			name:   "list verbose",
			routes: nodeRoutes(nil),
			args:   []string{"node", "status", "-verbose"},
			stdout: "ID                                    Node Pool  DC   Name   Class   Address   Version  Drain  Eligibility  Status\n" +
				nodeA + "  default    dc1  alpha  <none>  10.0.0.1  0.1.0    false  eligible     ready\n" +
				nodeB + "  gpus       dc2  beta   gpu     10.0.0.2  0.1.0    true   ineligible   ready\n",
		},
		{
			name:   "empty list",
			routes: map[string]route{"GET /v1/nodes": jsonBody(`[]`)},
			args:   []string{"node", "status"},
			stdout: "No nodes registered\n",
		},
		{
			name:   "one node by unique prefix",
			routes: nodeRoutes(map[string]route{"GET /v1/nodes": jsonBody(`[` + strings.SplitN(nodeListBody[1:], `},{`, 2)[0] + `}]`)}),
			args:   []string{"node", "status", "5f7e6"},
			stdout: "ID          = 5f7e6b1c\nName        = alpha\nNode Pool   = default\nClass       = <none>\nDC          = dc1\n" +
				"Drain       = false\nEligibility = eligible\nStatus      = ready\nDrivers     = mock_driver\nUptime      = 1h0m0s\n\n" +
				"Host Resource Utilization\nCPU      Memory           Disk\n250 MHz  1.0 GiB/8.0 GiB  -\n\n" +
				"Allocations\nNo allocations placed\n",
		},
		{
			name:   "ambiguous prefix",
			routes: nodeRoutes(nil),
			args:   []string{"node", "status", "5f7e"},
			code:   1,
			stderr: "Prefix matched multiple nodes\n\n" + formatNodeList(mustNodes(t, nodeListBody), true) + "\n",
		},
		{
			name:   "unknown node",
			routes: map[string]route{"GET /v1/nodes": jsonBody(`[]`)},
			args:   []string{"node", "status", "zz"},
			code:   1,
			stderr: "No node(s) with prefix or id \"zz\" found\n",
		},
		{
			name:   "two arguments",
			args:   []string{"node", "status", "a", "b"},
			code:   1,
			stderr: "This command takes either one argument or -self: <node>\n",
		},
	})
}

func mustNodes(t *testing.T, body string) []*api.NodeListStub {
	t.Helper()
	var out []*api.NodeListStub
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	return out
}

const drainResponse = `{"NodeModifyIndex":12,"EvalIDs":null,"EvalCreateIndex":0,"Index":12}`

func TestNodeDrain(t *testing.T) {
	one := map[string]route{"GET /v1/nodes": jsonBody(`[` + strings.SplitN(nodeListBody[1:], `},{`, 2)[0] + `}]`)}
	withDrain := func() map[string]route {
		r := nodeRoutes(one)
		r["PUT /v1/node/"+nodeA+"/drain"] = jsonBody(drainResponse)
		return r
	}
	cases := []struct {
		cliCase
		wantBody map[string]any
	}{
		{
			cliCase: cliCase{name: "enable detached with deadline", routes: withDrain(),
				args:   []string{"node", "drain", "-enable", "-deadline", "30m", "-ignore-system", "-m", "kernel", "-yes", "-detach", nodeA},
				stdout: "Node \"" + nodeA + "\" drain strategy set\n"},
			wantBody: map[string]any{"DrainSpec": map[string]any{"Deadline": float64(30 * 60 * 1e9), "IgnoreSystemJobs": true},
				"MarkEligible": true, "Meta": map[string]any{"message": "kernel"}},
		},
		{
			cliCase: cliCase{name: "force", routes: withDrain(), args: []string{"node", "drain", "-enable", "-force", "-yes", "-detach", "5f7e6"},
				stdout: "Node \"" + nodeA + "\" drain strategy set\n"},
			wantBody: map[string]any{"DrainSpec": map[string]any{"Deadline": float64(-1), "IgnoreSystemJobs": false}, "MarkEligible": true},
		},
		{
			cliCase: cliCase{name: "disable keeping the node ineligible", routes: withDrain(),
				args:   []string{"node", "drain", "-disable", "-keep-ineligible", "-yes", nodeA},
				stdout: "Node \"" + nodeA + "\" drain strategy unset\n"},
			wantBody: map[string]any{"DrainSpec": nil, "MarkEligible": false},
		},
		{
			cliCase: cliCase{name: "confirmation declined", routes: withDrain(), stdin: "n\n", args: []string{"node", "drain", "-enable", nodeA},
				stdout: "Are you sure you want to enable drain mode for node \"" + nodeA + "\"? [y/N]Canceling drain\n"},
		},
		{cliCase: cliCase{name: "needs enable or disable", args: []string{"node", "drain", nodeA}, code: 1,
			stderr: "Exactly one of -enable or -disable is required\n"}},
		{cliCase: cliCase{name: "not both", args: []string{"node", "drain", "-enable", "-disable", nodeA}, code: 1,
			stderr: "Exactly one of -enable or -disable is required\n"}},
		{cliCase: cliCase{name: "needs a node", args: []string{"node", "drain", "-enable"}, code: 1,
			stderr: "This command takes either one argument or -self: <node>\n"}},
		{cliCase: cliCase{name: "force and no deadline", args: []string{"node", "drain", "-enable", "-force", "-no-deadline", nodeA}, code: 1,
			stderr: "-force and -no-deadline cannot be used together\n"}},
		{
			cliCase: cliCase{name: "refusal is shown", args: []string{"node", "drain", "-enable", "-yes", "-detach", nodeA}, code: 1,
				routes: func() map[string]route {
					r := nodeRoutes(one)
					r["PUT /v1/node/"+nodeA+"/drain"] = textError(403, "Permission denied: node write access required")
					return r
				}(),
				stderr: "Error updating drain specification: Unexpected response code: 403 (Permission denied: node write access required)\n"},
			wantBody: map[string]any{"DrainSpec": map[string]any{"Deadline": float64(3600 * 1e9), "IgnoreSystemJobs": false}, "MarkEligible": true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, tc.routes)
			code, out, errOut := runCLI(t, fa.srv.URL, tc.stdin, tc.args...)
			must.Eq(t, tc.code, code, must.Sprint(errOut))
			must.Eq(t, tc.stdout, out)
			must.Eq(t, tc.stderr, errOut)
			puts := fa.find("PUT", "/v1/node/"+nodeA+"/drain")
			if tc.wantBody == nil {
				must.SliceEmpty(t, puts)
				return
			}
			must.SliceLen(t, 1, puts)
			var body map[string]any
			must.NoError(t, json.Unmarshal([]byte(puts[0].Body), &body))
			must.Eq(t, nodeA, body["NodeID"])
			delete(body, "NodeID")
			if _, ok := tc.wantBody["Meta"]; !ok {
				delete(body, "Meta")
			}
			must.Eq(t, tc.wantBody, body)
		})
	}
}

// Without -detach the command follows the drain through the official client's monitor until
// the node's drain is gone and nothing runs there.
func TestNodeDrain_Monitors(t *testing.T) {
	routes := nodeRoutes(map[string]route{
		"GET /v1/nodes":                    jsonBody(`[` + strings.SplitN(nodeListBody[1:], `},{`, 2)[0] + `}]`),
		"PUT /v1/node/" + nodeA + "/drain": jsonBody(drainResponse),
	})
	fa := newFakeAgent(t, routes)
	code, out, errOut := runCLI(t, fa.srv.URL, "", "node", "drain", "-enable", "-yes", nodeA)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Ctrl-C to stop monitoring: will not cancel the node drain")
	must.StrContains(t, out, "Drain complete for node "+nodeA)
	must.StrContains(t, out, "All allocations on node \""+nodeA+"\" have stopped")
}

func TestNodeEligibility(t *testing.T) {
	one := map[string]route{"GET /v1/nodes": jsonBody(`[` + strings.SplitN(nodeListBody[1:], `},{`, 2)[0] + `}]`)}
	routes := nodeRoutes(one)
	routes["PUT /v1/node/"+nodeA+"/eligibility"] = jsonBody(`{"NodeModifyIndex":9,"EvalIDs":null,"EvalCreateIndex":0,"Index":9}`)
	cases := []struct {
		cliCase
		want string
	}{
		{cliCase: cliCase{name: "disable", routes: routes, args: []string{"node", "eligibility", "-disable", nodeA},
			stdout: "Node \"" + nodeA + "\" scheduling eligibility set: ineligible for scheduling\n"}, want: "ineligible"},
		{cliCase: cliCase{name: "enable", routes: routes, args: []string{"node", "eligibility", "-enable", "5f7e6"},
			stdout: "Node \"" + nodeA + "\" scheduling eligibility set: eligible for scheduling\n"}, want: "eligible"},
		{cliCase: cliCase{name: "needs one of the flags", args: []string{"node", "eligibility", nodeA}, code: 1,
			stderr: "Exactly one of -enable or -disable is required\n"}},
		{cliCase: cliCase{name: "self needs a client", routes: map[string]route{"GET /v1/agent/self": jsonBody(`{"Stats":{"client":{"enabled":"false"}}}`)},
			args: []string{"node", "eligibility", "-enable", "-self"}, code: 1,
			stderr: "The agent at this address runs no client: -self needs one\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, tc.routes)
			code, out, errOut := runCLI(t, fa.srv.URL, tc.stdin, tc.args...)
			must.Eq(t, tc.code, code, must.Sprint(errOut))
			must.Eq(t, tc.stdout, out)
			must.Eq(t, tc.stderr, errOut)
			puts := fa.find("PUT", "/v1/node/"+nodeA+"/eligibility")
			if tc.want == "" {
				must.SliceEmpty(t, puts)
				return
			}
			must.SliceLen(t, 1, puts)
			must.StrContains(t, puts[0].Body, `"Eligibility":"`+tc.want+`"`)
		})
	}
}

// node status -verbose lists the node's host_network blocks by name.
func TestNodeStatus_HostNetworks(t *testing.T) {
	n := &api.Node{ID: nodeA, Name: "alpha", HostNetworks: map[string]*api.HostNetworkInfo{
		"public":  {Name: "public", CIDR: "10.0.0.0/8", Interface: "eth1", ReservedPorts: "22,80-90"},
		"private": {Name: "private", Interface: "eth2"},
	}}
	out := formatNode(n, nil, true, time.Unix(0, 0), nil)
	must.StrContains(t, out, "\n\nHost Networks\n"+
		"Name     CIDR        Interface  ReservedPorts\n"+
		"private  <none>      eth2       <none>\n"+
		"public   10.0.0.0/8  eth1       22,80-90\n")
	must.StrNotContains(t, formatNode(n, nil, false, time.Unix(0, 0), nil), "Host Networks")
}
