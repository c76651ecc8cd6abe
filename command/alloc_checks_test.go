package command

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestAllocChecks(t *testing.T) {
	checksPath := "/v1/client/allocation/" + execAllocID + "/checks"
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Unix()
	routes := map[string]route{
		"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
		"GET /v1/allocation/" + execAllocID: jsonBody(execAllocJSON),
		"GET " + checksPath: jsonBody(`{"9f4e18fd0867cebb19a8fac3d7a1cf27":{"ID":"9f4e18fd0867cebb19a8fac3d7a1cf27",` +
			`"Check":"alive","Group":"web.web[0]","Mode":"healthiness","Output":"nomad: http ok","Service":"web",` +
			`"Task":"","Status":"success","StatusCode":200,"Timestamp":` + strconv.FormatInt(ts, 10) + `}}`),
	}
	fa := newFakeAgent(t, routes)
	code, stdout, stderr := runCLI(t, fa.srv.URL, "", "alloc", "checks", "5a7c")
	must.Zero(t, code, must.Sprint(stderr))
	for _, want := range []string{"Status of 1 Nomad Service Checks", "ID         = 9f4e18fd0867cebb19a8fac3d7a1cf27",
		"Name       = alive", "Task       = (group)", "Status     = success", "StatusCode = 200", "Mode       = healthiness",
		"Output     = nomad: http ok"} {
		must.StrContains(t, stdout, want)
	}
	reqs := fa.find("GET", checksPath)
	must.SliceLen(t, 1, reqs)

	code, stdout, _ = runCLI(t, fa.srv.URL, "", "alloc", "checks", "-json", "5a7c")
	must.Zero(t, code)
	must.StrContains(t, stdout, `"Check": "alive"`)
	code, stdout, _ = runCLI(t, fa.srv.URL, "", "alloc", "checks", "-t", `{{range .}}{{.Check}}={{.Status}}{{end}}`, "5a7c")
	must.Zero(t, code)
	must.Eq(t, "alive=success", strings.TrimSpace(stdout))

	code, _, stderr = runCLI(t, fa.srv.URL, "", "alloc", "checks")
	must.Eq(t, 1, code)
	must.StrContains(t, stderr, "<allocation>")
}
