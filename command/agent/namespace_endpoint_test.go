package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestNamespaceEndpoint_CRUD(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	namespaces := c.Namespaces()

	list, qm, err := namespaces.List(nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.Len(t, 1, list)
	must.Eq(t, "default", list[0].Name)

	wm, err := namespaces.Register(&api.Namespace{Name: "prod", Description: "production", Meta: map[string]string{"team": "ops"}}, nil)
	must.NoError(t, err)
	must.Positive(t, wm.LastIndex)

	ns, _, err := namespaces.Info("prod", nil)
	must.NoError(t, err)
	must.Eq(t, "production", ns.Description)
	must.Eq(t, map[string]string{"team": "ops"}, ns.Meta)

	t.Run("update at the named path", func(t *testing.T) {
		_, err := c.Raw().Write("/v1/namespace/prod", &api.Namespace{Description: "changed"}, nil, nil)
		must.NoError(t, err)
		ns, _, err := namespaces.Info("prod", nil)
		must.NoError(t, err)
		must.Eq(t, "changed", ns.Description)
	})

	t.Run("prefix", func(t *testing.T) {
		list, _, err := namespaces.PrefixList("pr", nil)
		must.NoError(t, err)
		must.Len(t, 1, list)
		must.Eq(t, "prod", list[0].Name)
	})

	t.Run("delete", func(t *testing.T) {
		_, err := namespaces.Delete("prod", nil)
		must.NoError(t, err)
		_, _, err = namespaces.Info("prod", nil)
		status, body := responseError(t, err)
		must.Eq(t, 404, status)
		must.Eq(t, "namespace not found", body)
	})
}

func TestNamespaceEndpoint_BadInput(t *testing.T) {
	ta := NewTestAgent(t, nil)
	cases := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
	}{
		{name: "name differs from path", method: "PUT", path: "/v1/namespace/a", body: `{"Name":"b"}`, wantStatus: 400},
		{name: "invalid name", method: "PUT", path: "/v1/namespace", body: `{"Name":"not valid!"}`, wantStatus: 400},
		{name: "malformed", method: "PUT", path: "/v1/namespace", body: `{"Name":`, wantStatus: 400},
		{name: "wrong method", method: "PATCH", path: "/v1/namespace/default", wantStatus: 405},
		{name: "missing", method: "GET", path: "/v1/namespace/nope", wantStatus: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, tc.method, tc.path, stringBody(tc.body), nil)
			must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
			list, _, err := ta.Client("").Namespaces().List(nil)
			must.NoError(t, err)
			must.Len(t, 1, list)
		})
	}
}
