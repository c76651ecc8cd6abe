package agent

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// newTemplateAgent is a client agent with ACLs on, so the templates' reads go through the
// task's workload identity and its ACL, and the management token's secret.
func newTemplateAgent(t *testing.T) (*TestAgent, *api.Client) {
	t.Helper()
	ta := NewTestClientAgent(t, func(c *Config) { c.ACL.Enabled = true })
	var reply structs.ACLTokenUpsertResponse
	must.NoError(t, ta.Server().Endpoints.ACL.Bootstrap(&nomad.BootstrapRequest{}, &reply))
	must.SliceNotEmpty(t, reply.Tokens)
	return ta, ta.Client(reply.Tokens[0].SecretID)
}

// catFile reads a file of an allocation through the API, "" while it cannot.
func catFile(c *api.Client, allocID, path string) string {
	alloc, _, err := c.Allocations().Info(allocID, nil)
	if err != nil {
		return ""
	}
	rc, err := c.AllocFS().Cat(alloc, path, nil)
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

// startScript prints what the task was started with, then waits: each start adds a line to
// stdout, and so does each SIGHUP.
const startScript = `echo "start: $(cat local/conf.txt) env=$GREETING"
trap 'echo "hup: $(cat local/conf.txt)"' HUP
while :; do sleep 0.1; done`

func templateJob(id, changeMode, data string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("app", "raw_exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", startScript})
	task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
	task.Templates = []*api.Template{
		{EmbeddedTmpl: new(data), DestPath: new("local/conf.txt"), ChangeMode: new(changeMode), ChangeSignal: new("SIGHUP"),
			Splay: new(time.Duration(0)), ChangeScript: &api.ChangeScript{Command: new("/bin/sh"),
				Args: []string{"-c", `echo "script: $(cat local/conf.txt)" > local/script.out`}, FailOnError: new(true),
				RunOnFirstRender: new(true)}},
		{EmbeddedTmpl: new(`GREETING={{ with nomadVar "nomad/jobs/` + id + `" }}{{ .greeting }}{{ end }}`),
			DestPath: new("secrets/app.env"), Envvars: new(true), ChangeMode: new("noop")},
	}
	job.AddTaskGroup(api.NewTaskGroup("web", 1).AddTask(task))
	return job
}

// TestTemplate_NomadVariable renders a template from a Nomad variable the job's identity may
// read, starts the task with it, and follows a change of the variable with the template's
// change_mode.
func TestTemplate_NomadVariable(t *testing.T) {
	cases := []struct {
		name         string
		changeMode   string
		wantRestarts uint64
		wantStdout   string
		// wantScript is what the change script wrote, "" for none.
		wantScript string
	}{
		{name: "restart", changeMode: "restart", wantRestarts: 1,
			wantStdout: "start: greeting=hello env=hello\nstart: greeting=bonjour env=bonjour\n"},
		{name: "signal", changeMode: "signal", wantRestarts: 0,
			wantStdout: "start: greeting=hello env=hello\nhup: greeting=bonjour\n"},
		{name: "script", changeMode: "script", wantRestarts: 0,
			wantStdout: "start: greeting=hello env=hello\n", wantScript: "script: greeting=bonjour\n"},
		{name: "noop", changeMode: "noop", wantRestarts: 0,
			wantStdout: "start: greeting=hello env=hello\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newTemplateAgent(t)
			id := "tmpl-" + tc.name
			path := "nomad/jobs/" + id
			_, _, err := c.Variables().Create(&api.Variable{Path: path, Items: api.VariableItems{"greeting": "hello"}}, nil)
			must.NoError(t, err)
			_, _, err = c.Jobs().Register(templateJob(id, tc.changeMode,
				`greeting={{ with nomadVar "`+path+`" }}{{ .greeting }}{{ end }}`), nil)
			must.NoError(t, err)
			allocs := allocsIn(t, c, id, map[string]int{"running": 1})
			allocID := allocs[0].ID

			eventually(t, 10*time.Second, "the first start's output", func() (bool, string) {
				out := catFile(c, allocID, "alloc/logs/app.stdout.0")
				return out == "start: greeting=hello env=hello\n", out
			})
			must.Eq(t, "greeting=hello", catFile(c, allocID, "app/local/conf.txt"))
			if tc.wantScript != "" {
				// run_on_first_render: the script ran once the task had started.
				eventually(t, 10*time.Second, "the first-render script's output", func() (bool, string) {
					out := catFile(c, allocID, "app/local/script.out")
					return out == "script: greeting=hello\n", out
				})
			}

			_, _, err = c.Variables().Update(&api.Variable{Path: path, Items: api.VariableItems{"greeting": "bonjour"}}, nil)
			must.NoError(t, err)
			eventually(t, 20*time.Second, "the template to render again", func() (bool, string) {
				out := catFile(c, allocID, "app/local/conf.txt")
				return out == "greeting=bonjour", out
			})
			eventually(t, 20*time.Second, "the task's output after the change", func() (bool, string) {
				out := catFile(c, allocID, "alloc/logs/app.stdout.0")
				return out == tc.wantStdout, out
			})
			if tc.wantScript != "" {
				eventually(t, 20*time.Second, "the change script's output", func() (bool, string) {
					out := catFile(c, allocID, "app/local/script.out")
					return out == tc.wantScript, out
				})
			}
			// The task's output shows the restart before the client's next status update tells
			// the server, so the count is read until it arrives.
			eventually(t, 10*time.Second, "the restart count reported to the server", func() (bool, string) {
				alloc, _, err := c.Allocations().Info(allocID, nil)
				if err != nil {
					return false, err.Error()
				}
				st := alloc.TaskStates["app"]
				return st.Restarts == tc.wantRestarts && st.State == structs.TaskStateRunning,
					fmt.Sprintf("restarts %d, state %s", st.Restarts, st.State)
			})
			if tc.wantScript != "" {
				// Recorded once the script has ended, which may be after its file is written.
				eventually(t, 10*time.Second, "the script's task event", func() (bool, string) {
					alloc, _, err := c.Allocations().Info(allocID, nil)
					if err != nil {
						return false, err.Error()
					}
					var types []string
					for _, e := range alloc.TaskStates["app"].Events {
						types = append(types, e.Type)
					}
					return slices.Contains(types, structs.TaskEventHookMessage), fmt.Sprint(types)
				})
			}
		})
	}
}

// TestTemplate_Failures fails the task's start, with the reason as a task event, when a
// template cannot render.
func TestTemplate_Failures(t *testing.T) {
	cases := []struct {
		name      string
		data      string
		dest      string
		wantEvent string
	}{
		{name: "consul function", data: `{{ key "a" }}`, dest: "local/x",
			wantEvent: `template function "key" needs Consul, and no Consul is configured`},
		{name: "vault function", data: `{{ with secret "kv/a" }}{{ .Data }}{{ end }}`, dest: "local/x",
			wantEvent: `template function "secret" needs Vault, and no Vault is configured`},
		{name: "destination outside the task", data: "x", dest: "../../etc/x",
			wantEvent: "path would leave its directory"},
		{name: "variable the job may not read", data: `{{ with nomadVar "nomad/jobs/other" }}{{ .a }}{{ end }}`, dest: "local/x",
			wantEvent: "403"},
	}
	_, c := newTemplateAgent(t)
	_, _, err := c.Variables().Create(&api.Variable{Path: "nomad/jobs/other", Items: api.VariableItems{"a": "secret-value"}}, nil)
	must.NoError(t, err)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := "tmpl-fail-" + string(rune('a'+i))
			job := api.NewBatchJob(id, id, "global", 50)
			job.Datacenters = []string{"dc1"}
			task := api.NewTask("app", "raw_exec").SetConfig("command", "/bin/true")
			task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
			task.Templates = []*api.Template{{EmbeddedTmpl: new(tc.data), DestPath: new(tc.dest)}}
			tg := api.NewTaskGroup("g", 1).AddTask(task)
			tg.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
			tg.ReschedulePolicy = &api.ReschedulePolicy{Attempts: new(0), Unlimited: new(false)}
			job.AddTaskGroup(tg)
			_, _, err := c.Jobs().Register(job, nil)
			must.NoError(t, err)
			allocs := allocsIn(t, c, id, map[string]int{"failed": 1})
			events := failureEvents(allocs[0])
			must.StrContains(t, events, tc.wantEvent)
			must.StrNotContains(t, events, "secret-value")
			must.StrNotContains(t, events, "eyJ") // no JWT
		})
	}
}

// TestTemplate_NomadService renders the addresses of a Nomad service, which the job registers
// only once its task runs: the template renders empty first, then again once it is there.
// nomadVarList and nomadVarExists read the job's variables through the same API.
func TestTemplate_NomadService(t *testing.T) {
	_, c := newTemplateAgent(t)
	job := templateJob("tmpl-svc", "noop", `{{ range nomadService "tmpl-web" }}{{ .Address }}:{{ .Port }}{{ end }}`)
	job.TaskGroups[0].Tasks[0].Templates = append(job.TaskGroups[0].Tasks[0].Templates, &api.Template{
		EmbeddedTmpl: new(`{{ range nomadVarList "nomad/jobs/tmpl-svc" }}{{ .Path }};{{ end }}` +
			`{{ nomadVarExists "nomad/jobs/tmpl-svc" }} {{ nomadVarExists "nomad/jobs/tmpl-svc/web" }}`),
		DestPath: new("local/vars.txt")})
	tg := job.TaskGroups[0]
	tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}}
	tg.Services = []*api.Service{{Name: "tmpl-web", PortLabel: "http", Provider: "nomad"}}
	_, _, err := c.Variables().Create(&api.Variable{Path: "nomad/jobs/tmpl-svc", Items: api.VariableItems{"greeting": "hi"}}, nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "tmpl-svc", map[string]int{"running": 1})
	alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
	must.NoError(t, err)
	port := alloc.AllocatedResources.Shared.Ports[0]
	eventually(t, 20*time.Second, "the service's address in the template", func() (bool, string) {
		out := catFile(c, alloc.ID, "app/local/conf.txt")
		return out == fmt.Sprintf("%s:%d", port.HostIP, port.Value), out
	})
	must.Eq(t, "nomad/jobs/tmpl-svc;true false", catFile(c, alloc.ID, "app/local/vars.txt"))
}

// TestTemplate_WaitsForVariable: a task whose template reads a variable that does not exist
// yet stays pending with an event naming it, and starts once the variable is written.
func TestTemplate_WaitsForVariable(t *testing.T) {
	_, c := newTemplateAgent(t)
	id := "tmpl-wait"
	_, _, err := c.Jobs().Register(templateJob(id, "noop",
		`greeting={{ with nomadVar "nomad/jobs/tmpl-wait" }}{{ .greeting }}{{ end }}`), nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, id, map[string]int{"pending": 1})
	eventually(t, 20*time.Second, "an event naming the missing variable", func() (bool, string) {
		alloc, _, err := c.Allocations().Info(allocs[0].ID, nil)
		if err != nil || alloc.TaskStates["app"] == nil {
			return false, fmt.Sprint(err)
		}
		var msgs []string
		for _, e := range alloc.TaskStates["app"].Events {
			msgs = append(msgs, e.DisplayMessage)
		}
		all := strings.Join(msgs, "; ")
		return strings.Contains(all, "Template: Missing: nomad.var.block(nomad/jobs/tmpl-wait"), all
	})
	_, _, err = c.Variables().Create(&api.Variable{Path: "nomad/jobs/" + id, Items: api.VariableItems{"greeting": "late"}}, nil)
	must.NoError(t, err)
	allocsIn(t, c, id, map[string]int{"running": 1})
	eventually(t, 10*time.Second, "the task's output", func() (bool, string) {
		out := catFile(c, allocs[0].ID, "alloc/logs/app.stdout.0")
		return out == "start: greeting=late env=late\n", out
	})
}
