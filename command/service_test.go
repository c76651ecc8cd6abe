package command

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestServiceCommands(t *testing.T) {
	reg := `{"ID":"_nomad-task-6d9f1b7b-0000-4000-8000-000000000001-group-web-api-http","ServiceName":"api","Namespace":"default",` +
		`"NodeID":"5ce0c3a6-0000-4000-8000-000000000001","Datacenter":"dc1","JobID":"web",` +
		`"AllocID":"6d9f1b7b-0000-4000-8000-000000000001","Tags":["db","cache"],"Address":"10.0.0.1","Port":30926,"CreateIndex":7,"ModifyIndex":7}`
	fa := newFakeAgent(t, map[string]route{
		"GET /v1/services":     jsonBody(`[{"Namespace":"default","Services":[{"ServiceName":"api","Tags":["cache","db"]},{"ServiceName":"web","Tags":[]}]}]`),
		"GET /v1/service/api":  jsonBody(`[` + reg + `]`),
		"GET /v1/service/none": jsonBody(`[]`),
		"GET /v1/client/allocation/6d9f1b7b-0000-4000-8000-000000000001/checks": jsonBody(`{"a":{"ID":"a","Check":"alive","Service":"api","Status":"success"},` +
			`"b":{"ID":"b","Check":"ready","Service":"api","Status":"failure"},"c":{"ID":"c","Check":"other","Service":"web","Status":"success"}}`),
		"DELETE /v1/service/api/x": jsonBody(`{}`),
		"DELETE /v1/service/api/y": textError(403, `Permission denied: submit-job capability required in namespace "default"`),
	})
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "list", args: []string{"service", "list"}, wantOut: "Service Name  Tags\napi           [cache,db]\nweb           []\n"},
		{name: "list every namespace", args: []string{"service", "list", "-namespace", "*"},
			wantOut: "Service Name  Namespace  Tags\napi           default    [cache,db]\nweb           default    []\n"},
		{name: "info", args: []string{"service", "info", "api"},
			wantOut: "Job ID  Address         Tags        Node ID   Alloc ID\nweb     10.0.0.1:30926  [db,cache]  5ce0c3a6  6d9f1b7b\n"},
		{name: "info verbose", args: []string{"service", "info", "-verbose", "api"},
			wantOut: "ID           = _nomad-task-6d9f1b7b-0000-4000-8000-000000000001-group-web-api-http\n" +
				"Service Name = api\nNamespace    = default\nJob ID       = web\n" +
				"Alloc ID     = 6d9f1b7b-0000-4000-8000-000000000001\nNode ID      = 5ce0c3a6-0000-4000-8000-000000000001\n" +
				"Datacenter   = dc1\nAddress      = 10.0.0.1:30926\nTags         = [db,cache]\n" +
				"Checks       = alive: success, ready: failure\n"},
		{name: "info of nothing", args: []string{"service", "info", "none"}, wantOut: "No service registrations found\n"},
		{name: "info needs a name", args: []string{"service", "info"}, wantCode: 1, wantErr: "This command takes one argument: <service name>\n"},
		{name: "delete", args: []string{"service", "delete", "api", "x"}, wantOut: "Successfully deleted service registration\n"},
		{name: "delete refused", args: []string{"service", "delete", "api", "y"}, wantCode: 1,
			wantErr: "Error deleting service registration: Unexpected response code: 403 (Permission denied: submit-job capability required in namespace \"default\")\n"},
		{name: "delete needs two", args: []string{"service", "delete", "api"}, wantCode: 1,
			wantErr: "This command takes two arguments: <service name> <service id>\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, fa.srv.URL, "", tc.args...)
			must.Eq(t, tc.wantCode, code, must.Sprint(errOut))
			must.Eq(t, tc.wantOut, out)
			must.Eq(t, tc.wantErr, errOut)
		})
	}
	t.Run("json", func(t *testing.T) {
		code, out, _ := runCLI(t, fa.srv.URL, "", "service", "info", "-json", "api")
		must.Zero(t, code)
		must.StrContains(t, out, `"Port": 30926`)
	})
	reqs := fa.find("GET", "/v1/services")
	must.Eq(t, []string{"*"}, reqs[1].Query["namespace"])
}
