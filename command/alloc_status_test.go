package command

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/shoenig/test/must"
)

func TestAllocStatus(t *testing.T) {
	now := time.Unix(0, 1796201706140062794)
	created := now.Add(-90 * time.Second).UnixNano()
	started := formatUnixNano(now.Add(-80 * time.Second).UnixNano())
	received := formatUnixNano(now.Add(-85 * time.Second).UnixNano())
	alloc := `{"ID":"` + execAllocID + `","EvalID":"ab4c7807-221f-72c2-ef01-0580a855e9f1","Name":"web.web[0]",` +
		`"Namespace":"prod","NodeID":"a4303e78-098f-2496-47fd-c5b947cc0361","NodeName":"box","JobID":"web",` +
		`"Job":{"ID":"web","Version":2},"TaskGroup":"web","ClientStatus":"running","ClientDescription":"Tasks are running",` +
		`"DesiredStatus":"run","CreateTime":` + itoa(created) + `,"ModifyTime":` + itoa(created) + `,` +
		`"TaskStates":{"sleep":{"State":"running","Restarts":1,"Events":[` +
		`{"Type":"Received","Time":` + itoa(now.Add(-85*time.Second).UnixNano()) + `,"DisplayMessage":"Task received by client"},` +
		`{"Type":"Started","Time":` + itoa(now.Add(-80*time.Second).UnixNano()) + `,"Message":"Task started by client"}]}}}`
	header := "ID                  = " + execAllocID + "\n" +
		"Eval ID             = ab4c7807\n" +
		"Name                = web.web[0]\n" +
		"Namespace           = prod\n" +
		"Node ID             = a4303e78\n" +
		"Node Name           = box\n" +
		"Job ID              = web\n" +
		"Job Version         = 2\n" +
		"Client Status       = running\n" +
		"Client Description  = Tasks are running\n" +
		"Desired Status      = run\n" +
		"Desired Description = <none>\n" +
		"Created             = 1m30s ago\n" +
		"Modified            = 1m30s ago\n\n" +
		"Task \"sleep\" is \"running\" (restarted 1 times)"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{name: "full", args: []string{"5a7c"}, want: header + "\nRecent Events:\n" +
			"Time" + pad(len(started)-4) + "  Type      Description\n" +
			started + "  Started   Task started by client\n" +
			received + "  Received  Task received by client\n"},
		{name: "short", args: []string{"-short", "5a7c"}, want: header + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fa := newFakeAgent(t, map[string]route{
				"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
				"GET /v1/allocation/" + execAllocID: jsonBody(alloc),
			})
			ui := cli.NewMockUi()
			cmd := &AllocStatusCommand{Meta: Meta{Ui: ui}, now: func() time.Time { return now }}
			code := cmd.Run(append([]string{"-address=" + fa.srv.URL}, tc.args...))
			must.Eq(t, 0, code, must.Sprint(ui.ErrorWriter.String()))
			must.Eq(t, tc.want, ui.OutputWriter.String())
		})
	}
	t.Run("replaced", func(t *testing.T) {
		// A failed allocation the servers rescheduled names its replacement, short as the
		// other IDs, and the header's column widens for the longer key.
		replaced := strings.Replace(alloc, `"ClientStatus":"running"`,
			`"NextAllocation":"9d2f61c0-5a0e-31b4-86a1-0c1f3a7e2b44","ClientStatus":"running"`, 1)
		fa := newFakeAgent(t, map[string]route{
			"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
			"GET /v1/allocation/" + execAllocID: jsonBody(replaced),
		})
		ui := cli.NewMockUi()
		cmd := &AllocStatusCommand{Meta: Meta{Ui: ui}, now: func() time.Time { return now }}
		code := cmd.Run([]string{"-address=" + fa.srv.URL, "-short", "5a7c"})
		must.Eq(t, 0, code, must.Sprint(ui.ErrorWriter.String()))
		out := ui.OutputWriter.String()
		must.StrContains(t, out, "Modified             = 1m30s ago\nReplacement Alloc ID = 9d2f61c0\n\n")
		must.StrContains(t, out, "ID                   = "+execAllocID+"\n")
	})
	t.Run("json", func(t *testing.T) {
		fa := newFakeAgent(t, map[string]route{
			"GET /v1/allocations":               jsonBody(`[{"ID":"` + execAllocID + `"}]`),
			"GET /v1/allocation/" + execAllocID: jsonBody(alloc),
		})
		code, out, _ := runCLI(t, fa.srv.URL, "", "alloc", "status", "-json", "5a7c")
		must.Eq(t, 0, code)
		must.StrContains(t, out, `"ID": "`+execAllocID+`"`)
	})
	t.Run("arguments", func(t *testing.T) {
		code, _, errOut := runCLI(t, "http://127.0.0.1:1", "", "alloc", "status")
		must.Eq(t, 1, code)
		must.Eq(t, "This command takes one argument: <allocation>\n", errOut)
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func pad(n int) string { return strings.Repeat(" ", n) }
