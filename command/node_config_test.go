package command

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestNodeConfig(t *testing.T) {
	runCLICases(t, []cliCase{
		{
			name:   "list servers",
			routes: map[string]route{"GET /v1/agent/servers": jsonBody(`["10.0.0.1:4647","10.0.0.2:4647"]`)},
			args:   []string{"node", "config", "-servers"},
			stdout: "10.0.0.1:4647\n10.0.0.2:4647\n",
		},
		{
			name:   "no servers known",
			routes: map[string]route{"GET /v1/agent/servers": jsonBody(`[]`)},
			args:   []string{"node", "config", "-servers"},
		},
		{
			name:   "refused",
			routes: map[string]route{"GET /v1/agent/servers": textError(http.StatusForbidden, "Permission denied: agent read required")},
			args:   []string{"node", "config", "-servers"},
			code:   1,
			stderr: "Error querying the client's servers: Unexpected response code: 403 (Permission denied: agent read required)\n",
		},
		{
			name:   "update",
			routes: map[string]route{"PUT /v1/agent/servers": jsonBody(`null`)},
			args:   []string{"node", "config", "-update-servers", "10.0.0.3:4647", "10.0.0.4"},
			stdout: "Updated the client's servers\n",
		},
		{name: "needs a flag", args: []string{"node", "config"}, code: 1, stderr: "This command needs one of -servers or -update-servers\n"},
		{name: "not both flags", args: []string{"node", "config", "-servers", "-update-servers", "a"}, code: 1,
			stderr: "This command needs one of -servers or -update-servers\n"},
		{name: "update needs addresses", args: []string{"node", "config", "-update-servers"}, code: 1,
			stderr: "This command takes at least one argument with -update-servers: <addr>\n"},
		{name: "listing takes no addresses", args: []string{"node", "config", "-servers", "a"}, code: 1,
			stderr: "This command takes no arguments with -servers\n"},
	})

	fa := newFakeAgent(t, map[string]route{"PUT /v1/agent/servers": jsonBody(`null`)})
	code, _, errOut := runCLI(t, fa.srv.URL, "", "node", "config", "-update-servers", "10.0.0.3:4647", "10.0.0.4")
	must.Eq(t, 0, code, must.Sprint(errOut))
	reqs := fa.find("PUT", "/v1/agent/servers")
	must.Len(t, 1, reqs)
	must.Eq(t, []string{"10.0.0.3:4647", "10.0.0.4"}, reqs[0].Query["address"])
}

func TestNodeMeta(t *testing.T) {
	metaBody := `{"Meta":{"rack":"r2","zone":"a"},"Dynamic":{"rack":"r2","gone":null},"Static":{"rack":"r1","zone":"a"}}`
	runCLICases(t, []cliCase{
		{
			name:   "read the agent's node",
			routes: map[string]route{"GET /v1/client/metadata": jsonBody(metaBody)},
			args:   []string{"node", "meta", "read"},
			stdout: "All Meta\nrack = r2\nzone = a\n\nDynamic Meta\ngone = <unset>\nrack = r2\n\nStatic Meta\nrack = r1\nzone = a\n",
		},
		{
			name:   "read as JSON",
			routes: map[string]route{"GET /v1/client/metadata": jsonBody(`{"Meta":{"a":"1"},"Dynamic":{},"Static":{"a":"1"}}`)},
			args:   []string{"node", "meta", "read", "-json"},
			stdout: "{\n    \"Meta\": {\n        \"a\": \"1\"\n    },\n    \"Dynamic\": {},\n    \"Static\": {\n        \"a\": \"1\"\n    }\n}\n",
		},
		{
			name:   "refused",
			routes: map[string]route{"GET /v1/client/metadata": textError(http.StatusForbidden, "Permission denied: node read required")},
			args:   []string{"node", "meta", "read"},
			code:   1,
			stderr: "Error reading the node's metadata: Unexpected response code: 403 (Permission denied: node read required)\n",
		},
		{name: "apply needs something", args: []string{"node", "meta", "apply"}, code: 1,
			stderr: "This command takes at least one <key>=<value> argument or -unset\n"},
		{name: "apply needs key=value", args: []string{"node", "meta", "apply", "rack"}, code: 1,
			stderr: "Invalid argument \"rack\": expected <key>=<value>\n"},
	})

	// -node-id is resolved by prefix and sent; keys are set and unset in one request.
	routes := nodeRoutes(map[string]route{
		"GET /v1/nodes":           jsonBody(`[{"ID":"` + nodeA + `"}]`),
		"GET /v1/client/metadata": jsonBody(metaBody),
		"POST /v1/client/metadata": func(w http.ResponseWriter, r *http.Request) {
			jsonBody(metaBody)(w, r)
		},
	})
	fa := newFakeAgent(t, routes)
	code, _, errOut := runCLI(t, fa.srv.URL, "", "node", "meta", "read", "-node-id", nodeA[:6])
	must.Eq(t, 0, code, must.Sprint(errOut))
	reads := fa.find("GET", "/v1/client/metadata")
	must.Len(t, 1, reads)
	must.Eq(t, []string{nodeA}, reads[0].Query["node_id"])

	code, out, errOut := runCLI(t, fa.srv.URL, "", "node", "meta", "apply", "-node-id", nodeA[:6], "-unset", "gone,old", "rack=r3", "empty=")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "", out)
	applies := fa.find("POST", "/v1/client/metadata")
	must.Len(t, 1, applies)
	var sent api.NodeMetaApplyRequest
	must.NoError(t, json.Unmarshal([]byte(applies[0].Body), &sent))
	must.Eq(t, nodeA, sent.NodeID)
	r3, empty := "r3", ""
	must.Eq(t, map[string]*string{"rack": &r3, "empty": &empty, "gone": nil, "old": nil}, sent.Meta)
}

func TestScalingPolicy(t *testing.T) {
	const (
		policyA = "0a1b2c3d-0000-4000-8000-000000000001"
		policyB = "0a1b9999-0000-4000-8000-000000000002"
	)
	listBody := `[{"ID":"` + policyB + `","Enabled":false,"Type":"horizontal","Target":{"Group":"api","Job":"web","Namespace":"default"}},` +
		`{"ID":"` + policyA + `","Enabled":true,"Type":"horizontal","Target":{"Job":"web","Namespace":"default","Group":"cache"}}]`
	policyBody := `{"ID":"` + policyA + `","Enabled":true,"Type":"horizontal","Min":1,"Max":5,` +
		`"Target":{"Job":"web","Namespace":"default","Group":"cache"},"Policy":{"cooldown":"1m"}}`
	routes := map[string]route{
		"GET /v1/scaling/policies":          jsonBody(listBody),
		"GET /v1/scaling/policy/" + policyA: jsonBody(policyBody),
	}
	runCLICases(t, []cliCase{
		{
			name:   "list",
			routes: routes,
			args:   []string{"scaling", "policy", "list"},
			stdout: "ID        Enabled  Type        Target\n" +
				"0a1b2c3d  true     horizontal  Namespace:default,Job:web,Group:cache\n" +
				"0a1b9999  false    horizontal  Namespace:default,Job:web,Group:api\n",
		},
		{
			name:   "list with a template",
			routes: routes,
			args:   []string{"scaling", "policy", "list", "-t", `{{range .}}{{.ID}} {{end}}`},
			stdout: policyA + " " + policyB + " \n",
		},
		{
			name:   "none",
			routes: map[string]route{"GET /v1/scaling/policies": jsonBody(`[]`)},
			args:   []string{"scaling", "policy", "list"},
			stdout: "No policies found\n",
		},
		{
			name:   "info by prefix",
			routes: routes,
			args:   []string{"scaling", "policy", "info", "0a1b2"},
			stdout: "ID      = " + policyA + "\nEnabled = true\nType    = horizontal\n" +
				"Target  = Namespace:default,Job:web,Group:cache\nMin     = 1\nMax     = 5\n\n" +
				"Policy\n{\n    \"cooldown\": \"1m\"\n}\n",
		},
		{
			name:   "ambiguous prefix",
			routes: routes,
			args:   []string{"scaling", "policy", "info", "0a1b"},
			code:   1,
			stderr: "Prefix matched multiple scaling policies\n\n" +
				"ID                                    Enabled  Type        Target\n" +
				policyA + "  true     horizontal  Namespace:default,Job:web,Group:cache\n" +
				policyB + "  false    horizontal  Namespace:default,Job:web,Group:api\n",
		},
		{
			name:   "unknown",
			routes: routes,
			args:   []string{"scaling", "policy", "info", "ff"},
			code:   1,
			stderr: "No scaling policy with prefix or ID \"ff\" found\n",
		},
		{name: "info needs an ID", args: []string{"scaling", "policy", "info"}, code: 1, stderr: "This command takes one argument: <policy>\n"},
		{name: "json and template", routes: routes, args: []string{"scaling", "policy", "list", "-json", "-t", "x"}, code: 1,
			stderr: "Only one of -json or -t may be given\n"},
	})

	fa := newFakeAgent(t, routes)
	code, _, errOut := runCLI(t, fa.srv.URL, "", "scaling", "policy", "list", "-job", "web", "-type", "horizontal", "-namespace", "prod")
	must.Eq(t, 0, code, must.Sprint(errOut))
	reqs := fa.find("GET", "/v1/scaling/policies")
	must.Len(t, 1, reqs)
	must.Eq(t, []string{"web"}, reqs[0].Query["job"])
	must.Eq(t, []string{"horizontal"}, reqs[0].Query["type"])
	must.Eq(t, []string{"prod"}, reqs[0].Query["namespace"])
}

func TestPluginStatus(t *testing.T) {
	pluginList := `[{"ID":"ebs","Provider":"aws.ebs","ControllersHealthy":1,"ControllersExpected":2,"NodesHealthy":3,"NodesExpected":3}]`
	runCLICases(t, []cliCase{
		{
			// The servers run no CSI plugins and answer the empty list, as the API does.
			name:   "empty list",
			routes: map[string]route{"GET /v1/plugins": jsonBody(`[]`)},
			args:   []string{"plugin", "status"},
			stdout: "Container Storage Interface\nNo CSI plugins\n",
		},
		{
			name:   "empty list as JSON",
			routes: map[string]route{"GET /v1/plugins": jsonBody(`[]`)},
			args:   []string{"plugin", "status", "-json"},
			stdout: "[]\n",
		},
		{
			name:   "list",
			routes: map[string]route{"GET /v1/plugins": jsonBody(pluginList)},
			args:   []string{"plugin", "status"},
			stdout: "Container Storage Interface\nID   Provider  Controllers Healthy/Expected  Nodes Healthy/Expected\nebs  aws.ebs   1/2                           3/3\n",
		},
		{
			name:   "one",
			routes: map[string]route{"GET /v1/plugins": jsonBody(pluginList), "GET /v1/plugin/csi/ebs": jsonBody(`{"ID":"ebs","Provider":"aws.ebs","Version":"1.2","ControllersHealthy":1,"ControllersExpected":2,"NodesHealthy":3,"NodesExpected":3}`)},
			args:   []string{"plugin", "status", "eb"},
			stdout: "ID                   = ebs\nProvider             = aws.ebs\nVersion              = 1.2\nControllers Healthy  = 1\n" +
				"Controllers Expected = 2\nNodes Healthy        = 3\nNodes Expected       = 3\n",
		},
		{
			name:   "unknown",
			routes: map[string]route{"GET /v1/plugins": jsonBody(`[]`)},
			args:   []string{"plugin", "status", "ebs"},
			code:   1,
			stderr: "No plugin(s) with prefix or ID \"ebs\" found\n",
		},
		{name: "other type", args: []string{"plugin", "status", "-type", "device"}, code: 1,
			stderr: "Unsupported plugin type \"device\": the only type is csi\n"},
	})

	fa := newFakeAgent(t, map[string]route{"GET /v1/plugins": jsonBody(`[]`)})
	code, _, errOut := runCLI(t, fa.srv.URL, "", "plugin", "status", "eb")
	must.Eq(t, 1, code, must.Sprint(errOut))
	reqs := fa.find("GET", "/v1/plugins")
	must.Len(t, 1, reqs)
	must.Eq(t, []string{"csi"}, reqs[0].Query["type"])
	must.Eq(t, []string{"eb"}, reqs[0].Query["prefix"])
}

func TestCheck(t *testing.T) {
	serverSelf := jsonBody(`{"Stats":{"nomad":{"server":"true"},"client":{"enabled":"true"}}}`)
	peers := jsonBody(`["10.0.0.1:4647","10.0.0.2:4647","10.0.0.3:4647"]`)
	runCLICases(t, []cliCase{
		{
			name:   "server with enough peers",
			routes: map[string]route{"GET /v1/agent/self": serverSelf, "GET /v1/status/peers": peers},
			args:   []string{"check", "-min-peers", "2"},
		},
		{
			name:   "server short of peers",
			routes: map[string]route{"GET /v1/agent/self": serverSelf, "GET /v1/status/peers": peers},
			args:   []string{"check", "-min-peers", "3"},
			code:   2,
			stdout: "known peers: 2, fewer than the 3 expected\n",
		},
		{
			name:   "the agent's own Raft statistic wins",
			routes: map[string]route{"GET /v1/agent/self": jsonBody(`{"Stats":{"nomad":{"server":"true"},"raft":{"num_peers":"4"}}}`)},
			args:   []string{"check", "-min-peers", "4"},
		},
		{
			name: "client without servers",
			routes: map[string]route{
				"GET /v1/agent/self":    jsonBody(`{"Stats":{"client":{"enabled":"true"}}}`),
				"GET /v1/agent/servers": jsonBody(`[]`),
			},
			args:   []string{"check"},
			code:   2,
			stdout: "known servers: 0, fewer than the 1 expected\n",
		},
		{
			name: "client with servers",
			routes: map[string]route{
				"GET /v1/agent/self":    jsonBody(`{"Stats":{"client":{"enabled":"true"}}}`),
				"GET /v1/agent/servers": jsonBody(`["10.0.0.1:4647"]`),
			},
			args: []string{"check"},
		},
		{
			name:   "agent unreachable",
			routes: map[string]route{"GET /v1/agent/self": textError(http.StatusInternalServerError, "boom")},
			args:   []string{"check"},
			code:   2,
			stdout: "unable to query the agent: failed querying self endpoint: Unexpected response code: 500 (boom)\n",
		},
		{name: "takes no arguments", args: []string{"check", "x"}, code: 1, stderr: "This command takes no arguments\n"},
	})
}
