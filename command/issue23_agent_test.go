package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/command/agent"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

const batchJobHCL = `
job "NAME" {
  datacenters = ["dc1"]
  type        = "batch"
  POOL
  group "g" {
    count = 1
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`

func batchJob(t *testing.T, name, pool string) string {
	t.Helper()
	line := ""
	if pool != "" {
		line = `node_pool = "` + pool + `"`
	}
	return writeFile(t, name+".nomad.hcl", strings.NewReplacer("NAME", name, "POOL", line).Replace(batchJobHCL))
}

// TestVarInit_WritesASpecVarPutReads writes the example spec in both formats, refuses to
// overwrite it, and writes a variable from the HCL spec through an agent: the spec's path and
// items are stored, and a path and item given after the file win over the file's.
func TestVarInit_WritesASpecVarPutReads(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	t.Chdir(t.TempDir())

	code, out, errOut := runCLI(t, ta.URL(), "", "var", "init")
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, "Example variable specification written to spec.nv.hcl\n", out)
	code, _, errOut = runCLI(t, ta.URL(), "", "var", "init")
	must.Eq(t, 1, code)
	must.Eq(t, "Variable specification file \"spec.nv.hcl\" already exists\n", errOut)

	code, out, _ = runCLI(t, ta.URL(), "", "var", "init", "-out", "json")
	must.Zero(t, code)
	must.Eq(t, "Example variable specification written to spec.nv.json\n", out)
	raw, err := os.ReadFile("spec.nv.json")
	must.NoError(t, err)
	var fromJSON api.Variable
	must.NoError(t, json.Unmarshal(raw, &fromJSON))
	must.Eq(t, "nomad/jobs/example", fromJSON.Path)

	code, out, _ = runCLI(t, ta.URL(), "", "var", "init", "-quiet")
	must.Zero(t, code)
	must.StrContains(t, out, "items {")
	code, _, errOut = runCLI(t, ta.URL(), "", "var", "init", "-out", "yaml")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `Invalid -out "yaml"`)

	code, out, errOut = runCLI(t, ta.URL(), "", "var", "put", "@spec.nv.hcl")
	must.Zero(t, code, must.Sprint(errOut))
	must.StrContains(t, out, `Successfully wrote variable "nomad/jobs/example"`)
	v, _, err := ta.Client("").Variables().Read("nomad/jobs/example", nil)
	must.NoError(t, err)
	must.Eq(t, api.VariableItems{"username": "app", "password": "change-me"}, v.Items)

	code, _, errOut = runCLI(t, ta.URL(), "", "var", "put", "@spec.nv.json", "other/path", "password=s3cret")
	must.Zero(t, code, must.Sprint(errOut))
	v, _, err = ta.Client("").Variables().Read("other/path", nil)
	must.NoError(t, err)
	must.Eq(t, api.VariableItems{"username": "app", "password": "s3cret"}, v.Items)
}

// TestEvalDelete refuses while the eval broker runs, then deletes one evaluation by prefix and
// the evaluations a filter selects (after a confirmation that "n" declines), leaving the rest.
// The test agent runs no scheduling worker, so the evaluations stay pending until deleted.
func TestEvalDelete(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	c := ta.Client("")
	for _, name := range []string{"a", "b", "c"} {
		code, _, errOut := runCLI(t, ta.URL(), "", "job", "run", "-detach", batchJob(t, name, ""))
		must.Zero(t, code, must.Sprint(errOut))
	}
	evalOf := func(job string) string {
		evals, _, err := c.Jobs().Evaluations(job, nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, evals)
		return evals[0].ID
	}
	aEval := evalOf("a")

	code, _, errOut := runCLI(t, ta.URL(), "", "eval", "delete", aEval[:8])
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "The eval broker is not paused")
	must.StrContains(t, errOut, "-pause-eval-broker=true")

	code, _, errOut = runCLI(t, ta.URL(), "", "operator", "scheduler", "set-config", "-pause-eval-broker=true")
	must.Zero(t, code, must.Sprint(errOut))

	code, out, errOut := runCLI(t, ta.URL(), "", "eval", "delete", aEval[:8])
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, "Successfully deleted 1 evaluation\n", out)
	_, _, err := c.Evaluations().Info(aEval, nil)
	must.True(t, isNotFound(err), must.Sprint(err))

	code, out, _ = runCLI(t, ta.URL(), "n\n", "eval", "delete", "-filter", `JobID == "b"`)
	must.Zero(t, code)
	must.StrContains(t, out, "Cancelled")
	evalOf("b")

	code, out, errOut = runCLI(t, ta.URL(), "", "eval", "delete", "-yes", "-filter", `JobID == "b"`)
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, "Successfully deleted 1 evaluation\n", out)
	evals, _, err := c.Jobs().Evaluations("b", nil)
	must.NoError(t, err)
	must.SliceEmpty(t, evals)
	evalOf("c")

	code, out, _ = runCLI(t, ta.URL(), "", "eval", "delete", "-yes", "-filter", `JobID == "nope"`)
	must.Zero(t, code)
	must.Eq(t, "No evaluations matched the filter\n", out)

	code, _, errOut = runCLI(t, ta.URL(), "", "eval", "delete")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Give an evaluation ID or -filter")
}

// TestNodePool_InitJobsNodes applies the example pool "node pool init" writes, lists the
// jobs registered in it (and only those), and lists a pool's nodes.
func TestNodePool_InitJobsNodes(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	t.Chdir(t.TempDir())

	code, out, errOut := runCLI(t, ta.URL(), "", "node", "pool", "init")
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, "Example node pool specification written to pool.nomad.hcl\n", out)
	code, _, errOut = runCLI(t, ta.URL(), "", "node", "pool", "apply", "pool.nomad.hcl")
	must.Zero(t, code, must.Sprint(errOut))
	pool, _, err := ta.Client("").NodePools().Info("example", nil)
	must.NoError(t, err)
	must.Eq(t, "platform-team", pool.Meta["owner"])

	for _, j := range []struct{ name, pool string }{{"inpool", "example"}, {"elsewhere", ""}} {
		code, _, errOut := runCLI(t, ta.URL(), "", "job", "run", "-detach", batchJob(t, j.name, j.pool))
		must.Zero(t, code, must.Sprint(errOut))
	}
	code, out, errOut = runCLI(t, ta.URL(), "", "node", "pool", "jobs", "example")
	must.Zero(t, code, must.Sprint(errOut))
	must.RegexMatch(t, regexp.MustCompile(`(?m)^inpool\s+default\s+batch\s+50\s+pending`), out)
	must.StrNotContains(t, out, "elsewhere")

	code, out, _ = runCLI(t, ta.URL(), "", "node", "pool", "jobs", "-json", "example")
	must.Zero(t, code)
	var jobs []api.JobListStub
	must.NoError(t, json.Unmarshal([]byte(out), &jobs))
	must.SliceLen(t, 1, jobs)
	must.Eq(t, "inpool", jobs[0].ID)

	code, out, _ = runCLI(t, ta.URL(), "", "node", "pool", "jobs", "-t", "{{range .}}{{.ID}}{{end}}", "example")
	must.Zero(t, code)
	must.Eq(t, "inpool\n", out)

	code, out, errOut = runCLI(t, ta.URL(), "", "node", "pool", "nodes", "example")
	must.Zero(t, code, must.Sprint(errOut))
	must.Eq(t, "No nodes found\n", out)

	code, _, errOut = runCLI(t, ta.URL(), "", "node", "pool", "nodes", "missing")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, `Error listing the nodes of node pool "missing"`)
}

// TestNamespaceInspect prints the namespace as the API has it, or through a template.
func TestNamespaceInspect(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	ns := &api.Namespace{Name: "team", Description: "the team", Meta: map[string]string{"k": "v"}}
	_, err := ta.Client("").Namespaces().Register(ns, nil)
	must.NoError(t, err)

	code, out, errOut := runCLI(t, ta.URL(), "", "namespace", "inspect", "team")
	must.Zero(t, code, must.Sprint(errOut))
	var got api.Namespace
	must.NoError(t, json.Unmarshal([]byte(out), &got))
	must.Eq(t, "the team", got.Description)
	must.Eq(t, map[string]string{"k": "v"}, got.Meta)

	code, out, _ = runCLI(t, ta.URL(), "", "namespace", "inspect", "-t", "{{.Name}}/{{.Description}}", "team")
	must.Zero(t, code)
	must.Eq(t, "team/the team\n", out)

	code, _, errOut = runCLI(t, ta.URL(), "", "namespace", "inspect", "nope")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Error looking up namespace")
}

// TestJobScalingEvents scales a job twice and lists both events, newest first; -verbose adds
// the message and evaluation, and a job never scaled has none.
func TestJobScalingEvents(t *testing.T) {
	ta := agenttest.NewAgent(t, nil)
	code, _, errOut := runCLI(t, ta.URL(), "", "job", "run", "-detach", batchJob(t, "scaled", ""))
	must.Zero(t, code, must.Sprint(errOut))
	code, _, errOut = runCLI(t, ta.URL(), "", "job", "run", "-detach", batchJob(t, "still", ""))
	must.Zero(t, code, must.Sprint(errOut))

	code, out, _ := runCLI(t, ta.URL(), "", "job", "scaling-events", "still")
	must.Zero(t, code)
	must.Eq(t, "No events found\n", out)

	for _, n := range []string{"3", "5"} {
		code, _, errOut := runCLI(t, ta.URL(), "", "job", "scale", "-detach", "scaled", "g", n)
		must.Zero(t, code, must.Sprint(errOut))
	}
	code, out, errOut = runCLI(t, ta.URL(), "", "job", "scaling-events", "scal")
	must.Zero(t, code, must.Sprint(errOut))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	must.SliceLen(t, 3, lines, must.Sprint(out))
	must.RegexMatch(t, regexp.MustCompile(`^Task Group\s+Count\s+PrevCount\s+Date$`), lines[0])
	must.RegexMatch(t, regexp.MustCompile(`^g\s+5\s+3\s+\S`), lines[1])
	must.RegexMatch(t, regexp.MustCompile(`^g\s+3\s+1\s+\S`), lines[2])

	code, out, _ = runCLI(t, ta.URL(), "", "job", "scaling-events", "-verbose", "scaled")
	must.Zero(t, code)
	must.StrContains(t, strings.Split(out, "\n")[0], "Eval ID")
	must.RegexMatch(t, regexp.MustCompile(`(?m)^g\s+5\s+3\s+.*false\s+.*[0-9a-f-]{36}$`), out)
}

// TestOperatorClientState_AgentStateFile reads the state file a client agent wrote while it
// ran a job: while the agent runs the file is reported in use; once it is stopped the
// allocation, its task's handle (LocalState) and its reported state (RemoteState) are printed,
// from the data dir, and the same from the state file named directly.
func TestOperatorClientState_AgentStateFile(t *testing.T) {
	dataDir := t.TempDir()
	ta := agenttest.NewClientAgent(t, func(cfg *agent.Config) { cfg.DataDir = dataDir })
	c := ta.Client("")
	code, out, errOut := runCLIWithin(t, 60*time.Second, ta.URL(), "job", "run", "-detach", writeFile(t, "ports.nomad.hcl", portsJobHCL))
	must.Zero(t, code, must.Sprint(out, errOut))
	waitUntil(t, 60*time.Second, "the allocation to run", func() bool { return jobSettled(c, "ports") })
	allocs, _, err := c.Jobs().Allocations("ports", false, nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, allocs)
	allocID := allocs[0].ID

	code, _, errOut = runCLI(t, ta.URL(), "", "operator", "client-state", dataDir)
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "in use by a running agent")

	ta.Agent.Shutdown()
	for _, path := range []string{dataDir, filepath.Join(dataDir, "client", "state.db")} {
		code, out, errOut = runCLI(t, "http://127.0.0.1:1", "", "operator", "client-state", path)
		must.Zero(t, code, must.Sprint(errOut))
		var dump struct {
			Allocations map[string]struct {
				Alloc struct{ ID, JobID string }
				Tasks map[string]struct {
					LocalState  map[string]any
					RemoteState struct{ State string }
				}
			}
		}
		must.NoError(t, json.Unmarshal([]byte(out), &dump), must.Sprint(out))
		got, ok := dump.Allocations[allocID]
		must.True(t, ok, must.Sprint(out))
		must.Eq(t, "ports", got.Alloc.JobID)
		must.Eq(t, "running", got.Tasks["server"].RemoteState.State)
		must.MapNotEmpty(t, got.Tasks["server"].LocalState)
	}

	code, _, errOut = runCLI(t, "http://127.0.0.1:1", "", "operator", "client-state", t.TempDir())
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "no client state file")
}
