package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// The node list carries resources only when asked with ?resources=true, as upstream's.
func TestHTTP_NodeListResources(t *testing.T) {
	ta := NewTestAgent(t, nil)
	node := mock.Node("n1")
	node.NodeResources = &structs.NodeResources{NodeResources: api.NodeResources{MinDynamicPort: 20000, MaxDynamicPort: 32000}}
	node.ReservedResources = &api.NodeReservedResources{}
	var reply structs.NodeUpdateResponse
	must.NoError(t, ta.Server().Endpoints.Node.Register(&structs.NodeRegisterRequest{Node: node}, &reply))
	nodes := ta.Client("").Nodes()

	cases := []struct {
		name string
		qo   *api.QueryOptions
		want bool
	}{
		{name: "by default none", qo: nil},
		{name: "resources=false", qo: &api.QueryOptions{Params: map[string]string{"resources": "false"}}},
		{name: "resources=true", qo: &api.QueryOptions{Params: map[string]string{"resources": "true"}}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := nodes.List(tc.qo)
			must.NoError(t, err)
			must.SliceLen(t, 1, out)
			must.Eq(t, tc.want, out[0].NodeResources != nil)
			must.Eq(t, tc.want, out[0].ReservedResources != nil)
			if tc.want {
				must.Eq(t, 32000, out[0].NodeResources.MaxDynamicPort)
			}
		})
	}
	res := doHTTP(t, ta, "GET", "/v1/nodes?resources=maybe", nil, nil)
	must.Eq(t, 400, res.status)
	must.StrContains(t, res.body, "resources")
}
