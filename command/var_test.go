package command

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

const varAnswer = `{"Namespace":"default","Path":"app/db","CreateIndex":5,"ModifyIndex":7,"CreateTime":1,"ModifyTime":2,"Items":{"pass":"p","user":"u"}}`

func TestVarPut(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "pass")
	must.NoError(t, os.WriteFile(secretFile, []byte("from-file"), 0o600))
	cases := []struct {
		name      string
		path      string
		args      []string
		answer    route
		wantCode  int
		wantOut   string
		wantErr   string
		wantItems map[string]string
		wantCAS   string // "" = no ?cas
	}{
		{
			name: "items", path: "app/db", args: []string{"app/db", "user=u", "pass=p"}, answer: jsonBody(varAnswer),
			wantOut: "Successfully wrote variable \"app/db\" at modify index 7\n", wantItems: map[string]string{"user": "u", "pass": "p"},
		},
		{
			name: "value from a file", path: "app/db", args: []string{"app/db", "pass=@" + secretFile}, answer: jsonBody(varAnswer),
			wantOut: "Successfully wrote variable \"app/db\" at modify index 7\n", wantItems: map[string]string{"pass": "from-file"},
		},
		{
			name: "check index", path: "app/db", args: []string{"-check-index=7", "app/db", "a=b"}, answer: jsonBody(varAnswer),
			wantOut: "Successfully wrote variable \"app/db\" at modify index 7\n", wantItems: map[string]string{"a": "b"}, wantCAS: "7",
		},
		{
			name: "conflict", path: "app/db", args: []string{"-check-index=3", "app/db", "a=b"}, wantCode: 1,
			answer: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(409)
				_, _ = w.Write([]byte(varAnswer))
			},
			wantErr: "Check-and-set conflict: the variable's modify index is 7, not 3\n", wantItems: map[string]string{"a": "b"}, wantCAS: "3",
		},
		{name: "no items", args: []string{"app/db"}, wantCode: 1, wantErr: "This command takes a path and at least one <key>=<value> item\n"},
		{name: "bad item", args: []string{"app/db", "novalue"}, wantCode: 1, wantErr: "Item \"novalue\" is not <key>=<value>\n"},
		{name: "agent refuses", path: "a..b", args: []string{"a..b", "k=v"}, answer: textError(400, "invalid Path"), wantCode: 1,
			wantErr: "Error writing variable: Unexpected response code: 400 (invalid Path)\n", wantItems: map[string]string{"k": "v"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			routes := map[string]route{}
			if tc.answer != nil {
				routes["PUT /v1/var/"+tc.path] = tc.answer
			}
			fa := newFakeAgent(t, routes)
			code, out, errOut := runCLI(t, fa.srv.URL, "", append([]string{"var", "put"}, tc.args...)...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)
			if tc.wantItems == nil {
				must.SliceEmpty(t, fa.requests())
				return
			}
			reqs := fa.requests()
			must.SliceLen(t, 1, reqs)
			var body api.Variable
			must.NoError(t, json.Unmarshal([]byte(reqs[0].Body), &body))
			must.Eq(t, api.VariableItems(tc.wantItems), body.Items)
			if tc.wantCAS == "" {
				must.MapNotContainsKey(t, reqs[0].Query, "cas")
			} else {
				must.Eq(t, []string{tc.wantCAS}, reqs[0].Query["cas"])
			}
		})
	}
}

func TestVarGetListPurge(t *testing.T) {
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/var/app/db":    jsonBody(varAnswer),
		"GET /v1/var/app/none":  textError(404, "variable not found"),
		"GET /v1/vars":          jsonBody(`[{"Namespace":"default","Path":"app/db","ModifyTime":1700000000000000000}]`),
		"DELETE /v1/var/app/db": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) },
		"DELETE /v1/var/app/old": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(409)
			_, _ = w.Write([]byte(varAnswer))
		},
	})
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "get item", args: []string{"var", "get", "-item=pass", "app/db"}, wantOut: "p\n"},
		{name: "get missing item", args: []string{"var", "get", "-item=x", "app/db"}, wantCode: 1, wantErr: "Variable \"app/db\" has no item \"x\"\n"},
		{name: "get missing", args: []string{"var", "get", "app/none"}, wantCode: 1, wantErr: "Variable \"app/none\" not found\n"},
		{name: "list", args: []string{"var", "list", "app"}, wantOut: "Namespace  Path    Last Updated\ndefault    app/db  " + formatUnixNano(1700000000000000000) + "\n"},
		{name: "purge", args: []string{"var", "purge", "app/db"}, wantOut: "Successfully purged variable \"app/db\"!\n"},
		{name: "purge conflict", args: []string{"var", "purge", "-check-index=1", "app/old"}, wantCode: 1,
			wantErr: "Check-and-set conflict: the variable's modify index is 7, not 1\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)
		})
	}
	t.Run("get shows items", func(t *testing.T) {
		code, out, _ := runCLI(t, fa.srv.URL, "", "var", "get", "app/db")
		must.Zero(t, code)
		must.StrContains(t, out, "Path        = app/db")
		must.StrContains(t, out, "Items\npass = p\nuser = u")
	})
	t.Run("list sends the prefix", func(t *testing.T) {
		reqs := fa.find("GET", "/v1/vars")
		must.SliceNotEmpty(t, reqs)
		must.Eq(t, []string{"app"}, reqs[0].Query["prefix"])
	})
}
