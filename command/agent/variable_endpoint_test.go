package agent

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestVariableEndpoint_CRUD(t *testing.T) {
	ta := NewTestAgent(t, nil)
	vars := ta.Client("").Variables()

	created, _, err := vars.Create(&api.Variable{Path: "app/db", Items: map[string]string{"user": "u", "pass": "p"}}, nil)
	must.NoError(t, err)
	must.Eq(t, "default", created.Namespace)
	must.Positive(t, created.CreateTime)
	must.Eq(t, created.CreateIndex, created.ModifyIndex)

	got, _, err := vars.Read("app/db", nil)
	must.NoError(t, err)
	must.Eq(t, created, got)

	_, _, err = vars.Read("app/missing", nil)
	must.ErrorIs(t, err, api.ErrVariablePathNotFound)

	t.Run("cas conflict returns the current variable", func(t *testing.T) {
		stale := created.Copy()
		stale.Items["pass"] = "changed"
		updated, _, err := vars.Update(stale, nil)
		must.NoError(t, err)
		_, _, err = vars.CheckedUpdate(created.Copy(), nil)
		var conflict api.ErrCASConflict
		must.True(t, errors.As(err, &conflict))
		must.Eq(t, updated, conflict.Conflict)
		_, err = vars.CheckedDelete("app/db", created.ModifyIndex, nil)
		must.True(t, errors.As(err, &conflict))
		created = updated
	})

	t.Run("checked create refuses an existing path", func(t *testing.T) {
		_, _, err := vars.CheckedCreate(&api.Variable{Path: "app/db", Items: map[string]string{"a": "b"}}, nil)
		var conflict api.ErrCASConflict
		must.True(t, errors.As(err, &conflict))
	})

	t.Run("prefix and filter", func(t *testing.T) {
		_, _, err := vars.Create(&api.Variable{Path: "ops/x", Items: map[string]string{"a": "b"}}, nil)
		must.NoError(t, err)
		list, _, err := vars.PrefixList("app", nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, list)
		list, _, err = vars.List(&api.QueryOptions{Filter: `Path contains "ops"`})
		must.NoError(t, err)
		must.SliceLen(t, 1, list)
		must.Eq(t, "ops/x", list[0].Path)
	})

	t.Run("checked delete at the current index", func(t *testing.T) {
		_, err := vars.CheckedDelete("app/db", created.ModifyIndex, nil)
		must.NoError(t, err)
		_, _, err = vars.Read("app/db", nil)
		must.ErrorIs(t, err, api.ErrVariablePathNotFound)
	})
}

func TestVariableEndpoint_Refusals(t *testing.T) {
	ta := NewTestAgent(t, nil)
	// One write first: the new leader's own writes (its first root key) are then behind us,
	// and each refusal below can be checked to change no index.
	_, _, err := ta.Client("").Variables().Create(&api.Variable{Path: "first", Items: map[string]string{"k": "v"}}, nil)
	must.NoError(t, err)
	cases := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
		wantBody   string
	}{
		{name: "no items", method: "PUT", path: "/v1/var/a", body: `{}`, wantStatus: 400, wantBody: "variable missing required Items object"},
		{name: "bad path", method: "PUT", path: "/v1/var/a%2F..%2Fb", body: `{"Items":{"k":"v"}}`, wantStatus: 400, wantBody: "invalid Path"},
		{name: "dots", method: "PUT", path: "/v1/var/a/.x", body: `{"Items":{"k":"v"}}`, wantStatus: 400, wantBody: "invalid Path"},
		{name: "empty path", method: "GET", path: "/v1/var/", wantStatus: 400, wantBody: "invalid Path"},
		{name: "too long", method: "GET", path: "/v1/var/" + strings.Repeat("a", 129), wantStatus: 400, wantBody: "invalid Path"},
		{name: "body path differs", method: "PUT", path: "/v1/var/a", body: `{"Path":"b","Items":{"k":"v"}}`, wantStatus: 400, wantBody: "does not match the request path"},
		{name: "bad cas", method: "PUT", path: "/v1/var/a?cas=x", body: `{"Items":{"k":"v"}}`, wantStatus: 400, wantBody: "invalid cas"},
		{name: "two lock ops", method: "PUT", path: "/v1/var/a?lock-acquire&lock-release", body: `{"Items":{"k":"v"}}`, wantStatus: 400, wantBody: "only one of"},
		{name: "bad lock ttl", method: "PUT", path: "/v1/var/a?lock-acquire", body: `{"Items":{"k":"v"},"Lock":{"TTL":"soon"}}`, wantStatus: 400, wantBody: "invalid Lock.TTL"},
		{name: "lock ttl out of range", method: "PUT", path: "/v1/var/a?lock-acquire", body: `{"Items":{"k":"v"},"Lock":{"TTL":"1s"}}`, wantStatus: 400, wantBody: "invalid Lock.TTL"},
		{name: "release without a lock", method: "PUT", path: "/v1/var/a?lock-release", body: `{}`, wantStatus: 400, wantBody: "missing Lock.ID"},
		{name: "renew a missing variable", method: "PUT", path: "/v1/var/a?lock-renew", body: `{"Lock":{"ID":"x"}}`, wantStatus: 404, wantBody: "variable not found"},
		{name: "missing namespace", method: "PUT", path: "/v1/var/a?namespace=nope", body: `{"Items":{"k":"v"}}`, wantStatus: 400, wantBody: `namespace "nope" does not exist`},
		{name: "wrong method", method: "POST", path: "/v1/var/a", body: `{"Items":{"k":"v"}}`, wantStatus: 405, wantBody: "Invalid method"},
		{name: "list wrong method", method: "PUT", path: "/v1/vars", wantStatus: 405, wantBody: "Invalid method"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ta.Server().State().LatestIndex()
			req, err := http.NewRequest(tc.method, ta.URL()+tc.path, strings.NewReader(tc.body))
			must.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			must.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			must.Eq(t, tc.wantStatus, resp.StatusCode, must.Sprint(string(body)))
			must.StrContains(t, string(body), tc.wantBody)
			must.Eq(t, before, ta.Server().State().LatestIndex())
		})
	}
}
