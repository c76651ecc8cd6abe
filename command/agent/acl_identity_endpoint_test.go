package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func matrixACLIdentityEndpoints() []matrixEndpoint {
	return []matrixEndpoint{
		{name: "client introduction token", method: "PUT", path: "/v1/acl/identity/client-introduction-token",
			body: `{"NodeName":"n1"}`, allow: allowNodeWrite},
		{name: "client introduction token post", method: "POST", path: "/v1/acl/identity/client-introduction-token",
			allow: allowNodeWrite},
	}
}

func TestACLMatrix_ACLIdentity(t *testing.T) {
	runACLMatrix(t, matrixACLIdentityEndpoints(), matrixRows)
}

// An introduction token verifies against the JWKS and carries the pool, name and TTL asked for.
func TestACLIdentity_ClientIntroductionToken(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	resp, _, err := c.ACLIdentity().CreateClientIntroductionToken(&api.ACLIdentityClientIntroductionTokenRequest{
		TTL: time.Minute, NodeName: "edge-1", NodePool: "default"}, nil)
	must.NoError(t, err)

	res := doHTTP(t, ta, "GET", "/.well-known/jwks.json", nil, http.Header{})
	must.Eq(t, 200, res.status)
	var set jose.JSONWebKeySet
	must.NoError(t, json.Unmarshal([]byte(res.body), &set))
	parsed, err := jwt.ParseSigned(resp.JWT, []jose.SignatureAlgorithm{jose.RS256})
	must.NoError(t, err)
	keys := set.Key(parsed.Headers[0].KeyID)
	must.SliceLen(t, 1, keys)
	claims := map[string]any{}
	must.NoError(t, parsed.Claims(keys[0].Key, &claims))
	must.Eq[any](t, "default", claims["nomad_node_pool"])
	must.Eq[any](t, "edge-1", claims["nomad_node_name"])
	must.Eq[any](t, claims["iat"].(float64)+60, claims["exp"])

	cases := []struct {
		name, body, want string
	}{
		{"negative ttl", `{"TTL":-1}`, "TTL"},
		{"ttl too long", `{"TTL":90000000000000}`, "TTL"},
		{"unknown pool", `{"NodePool":"nope"}`, "NodePool"},
		{"not json", `{`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, "PUT", "/v1/acl/identity/client-introduction-token", strings.NewReader(tc.body), http.Header{})
			must.Eq(t, 400, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.want)
		})
	}
}
