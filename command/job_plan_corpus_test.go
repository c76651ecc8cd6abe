package command

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/command/agent"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/nomadfork/nomad/jobspec"
	"github.com/shoenig/test/must"
)

var updatePlans = flag.Bool("update-plans", false, "rewrite jobspec/testdata/corpus/*.plan from what `job plan` answers")

// planCorpusOnRawExec are the corpus files whose driver is detected or not depending on the
// machine running the test, not on this code: docker only where a Docker Engine answers, exec
// only as root with cgroups. What their plan says about the job's shape (counts, canaries,
// ports, host volumes) does not depend on the driver, so they are planned with the driver
// swapped for the test agent's raw_exec, every other line as written. Their rendered JSON is
// checked as written by jobspec's corpus test and TestJobRun_OutputMatchesCorpus.
var planCorpusOnRawExec = map[string]string{
	"service-checks":    `driver = "docker"`,
	"artifacts-volumes": `driver = "exec"`,
}

// planCorpusSteps says which corpus jobs are also registered, to plan them unchanged, and
// how to edit the file for an updated plan. Registered jobs must run on the test agent's
// raw_exec driver and keep running.
var planCorpusSteps = map[string]func(src string) string{
	"service":       func(src string) string { return strings.Replace(src, `"3600"`, `"3601"`, 1) },
	"system":        func(src string) string { return strings.Replace(src, `"3600"`, `"3601"`, 1) },
	"system-canary": func(src string) string { return strings.Replace(src, `"3600"`, `"3601"`, 1) },
}

// TestJobPlan_CorpusExitCodesAndAnnotations runs `nomad job plan` on every corpus job file
// against an agent with one raw_exec client, as a deploy pipeline would, and compares the
// exit code and the scheduler's dry-run lines with NAME.plan beside the file: new jobs of each
// shape (service, system, sysbatch, periodic, parameterized, infeasible, a system job whose
// driver no node has, a system job with canaries) and those refused with a reason (Vault,
// Consul Connect);
// for the files in planCorpusSteps also the job once registered (unchanged) and edited
// (updated). Exit codes: 0 nothing created or destroyed, 1 some would be, 255 error.
func TestJobPlan_CorpusExitCodesAndAnnotations(t *testing.T) {
	// The host volume artifacts-volumes asks for, so that its group places.
	ta := agenttest.NewClientAgent(t, func(cfg *agent.Config) {
		cfg.Client.HostVolumes = []*agent.HostVolumeConfig{{Name: "shared-data", Path: t.TempDir()}}
	})
	c := ta.Client("")
	waitUntil(t, 30*time.Second, "the agent's node to be ready", func() bool {
		nodes, _, err := c.Nodes().List(nil)
		return err == nil && len(nodes) == 1 && nodes[0].Status == "ready"
	})

	dir := filepath.Join("..", "jobspec", "testdata", "corpus")
	files, err := filepath.Glob(filepath.Join(dir, "*.nomad.hcl"))
	must.NoError(t, err)
	must.SliceNotEmpty(t, files)
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".nomad.hcl")
		t.Run(name, func(t *testing.T) {
			if driver, ok := planCorpusOnRawExec[name]; ok {
				src, err := os.ReadFile(path)
				must.NoError(t, err)
				must.StrContains(t, string(src), driver)
				path = filepath.Join(t.TempDir(), filepath.Base(path))
				swapped := strings.ReplaceAll(string(src), driver, `driver = "raw_exec"`)
				must.NoError(t, os.WriteFile(path, []byte(swapped), 0o644))
			}
			var got strings.Builder
			newPlan := planStep(t, ta.URL(), "new", path)
			got.WriteString(newPlan)
			if strings.HasPrefix(newPlan, "new: exit 255\n") {
				// Refused at plan: register must refuse it the same way, with nothing stored.
				code, _, errOut := runCLI(t, ta.URL(), "", "job", "run", "-detach", path)
				fmt.Fprintf(&got, "register: exit %d\n%s\n", code, strings.TrimSpace(errOut))
			}

			if edit := planCorpusSteps[name]; edit != nil {
				src, err := os.ReadFile(path)
				must.NoError(t, err)
				job, err := jobspec.ParseLocal(path, src, nil, dir)
				must.NoError(t, err)
				_, _, err = c.Jobs().Register(job, nil)
				must.NoError(t, err)
				waitUntil(t, 60*time.Second, "job "+*job.ID+" to be placed and running", func() bool {
					return jobSettled(c, *job.ID)
				})
				got.WriteString(planStep(t, ta.URL(), "unchanged", path))

				edited := filepath.Join(t.TempDir(), filepath.Base(path))
				must.NoError(t, os.WriteFile(edited, []byte(edit(string(src))), 0o644))
				got.WriteString(planStep(t, ta.URL(), "updated", edited))

				_, _, err = c.Jobs().Deregister(*job.ID, true, nil)
				must.NoError(t, err)
			}

			golden := filepath.Join(dir, name+".plan")
			if *updatePlans {
				must.NoError(t, os.WriteFile(golden, []byte(got.String()), 0o644))
			}
			want, err := os.ReadFile(golden)
			must.NoError(t, err)
			must.Eq(t, string(want), got.String())
		})
	}
}

// planStep runs `job plan -diff=false` on path and renders its exit code and the parts of
// its answer that do not depend on indexes or paths: the scheduler's dry-run lines, or the
// error.
func planStep(t *testing.T, addr, step, path string) string {
	t.Helper()
	code, out, errOut := runCLI(t, addr, "", "job", "plan", "-diff=false", path)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: exit %d\n", step, code)
	if code == 255 {
		b.WriteString(strings.TrimSpace(errOut) + "\n")
		return b.String()
	}
	inDryRun := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "Scheduler dry-run:":
			inDryRun = true
		case strings.HasPrefix(line, "Job Modify Index:"):
			inDryRun = false
		case inDryRun && strings.TrimSpace(line) != "":
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// jobSettled reports whether the job's evaluations are all complete and each of its
// allocations runs, so that a plan now sees the placed job and nothing pending.
func jobSettled(c *api.Client, id string) bool {
	evals, _, err := c.Jobs().Evaluations(id, nil)
	if err != nil || len(evals) == 0 {
		return false
	}
	for _, e := range evals {
		if e.Status != "complete" {
			return false
		}
	}
	allocs, _, err := c.Jobs().Allocations(id, false, nil)
	if err != nil || len(allocs) == 0 {
		return false
	}
	for _, a := range allocs {
		if a.ClientStatus != "running" {
			return false
		}
	}
	return true
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestJobRun_OutputMatchesCorpus checks that `nomad job run -output` prints, for every corpus
// job file, exactly the golden JSON jobspec's corpus test keeps beside it: upstream's
// parse-time defaults filled in (constraint operand, template splay, change mode and
// permissions, scaling type, periodic spec type, vault change mode and env), file()
// evaluated relative to the job file, so that tools diffing rendered JSON see no change.
func TestJobRun_OutputMatchesCorpus(t *testing.T) {
	t.Setenv("NOMAD_NAMESPACE", "")
	dir := filepath.Join("..", "jobspec", "testdata", "corpus")
	files, err := filepath.Glob(filepath.Join(dir, "*.nomad.hcl"))
	must.NoError(t, err)
	must.SliceNotEmpty(t, files)
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".nomad.hcl")
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "http://127.0.0.1:1", "", "job", "run", "-output", path)
			must.Eq(t, 0, code, must.Sprint(errOut))
			want, err := os.ReadFile(filepath.Join(dir, name+".json"))
			must.NoError(t, err)
			must.Eq(t, strings.TrimSpace(string(want)), strings.TrimSpace(out))
		})
	}
}
