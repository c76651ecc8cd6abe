//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

// dockerWebJob is the README's complete docker service (the block with `job "web"` and
// `provider = "nomad"` in the Docker driver section) with its image replaced and, given a
// checkPath, its check's path replaced: what a user copies is what this test runs.
func dockerWebJob(t *testing.T, image, checkPath string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	must.NoError(t, err)
	var job string
	for _, block := range strings.Split(string(readme), "```hcl\n")[1:] {
		block = block[:strings.Index(block, "```")]
		if strings.HasPrefix(block, `job "web" {`) && strings.Contains(block, `provider = "nomad"`) {
			job = block
		}
	}
	must.NotEq(t, "", job, must.Sprint("README has no docker service example"))
	for old, repl := range map[string]string{`"busybox:1.36"`: fmt.Sprintf("%q", image), `path     = "/"`: fmt.Sprintf("path     = %q", checkPath)} {
		must.StrContains(t, job, old)
		job = strings.Replace(job, old, repl, 1)
	}
	return job
}

// TestDockerService_PulledCheckedRolledBack: a docker job pulled from a registry answers on
// the host port the scheduler picked with the template it rendered from a variable, its
// deployment turns healthy by its http check, and a second version whose check fails is
// rolled back to the first by auto_revert.
func TestDockerService_PulledCheckedRolledBack(t *testing.T) {
	if !dockerWorks(t) {
		t.Skip("no Docker Engine")
	}
	dcli := dockertest.Client(t)
	reg := dockertest.StartRegistry(t, dockertest.RegistryOptions{})
	ref := reg.Push(t, dcli, dockertest.Image, "nomadfork/e2eweb:v1")
	t.Cleanup(func() { dockertest.RemoveImage(t, dcli, ref) })

	config, url := writeConfig(t, t.TempDir(), "client {\n  enabled = true\n}\n")
	agent := startAgent(t, config, url)
	c := agent.client()
	// Tasks outlive their agent: the job is stopped while the agent runs, so that no
	// container holds the image when its tag is removed.
	t.Cleanup(func() {
		allocs, _, _ := c.Jobs().Allocations("web", true, nil)
		_, _, _ = c.Jobs().Deregister("web", true, nil)
		waitUntil(t, time.Minute, "the job's containers to be removed", func() bool {
			for _, a := range allocs {
				ps, err := dcli.ContainerList(context.Background(), container.ListOptions{All: true,
					Filters: filters.NewArgs(filters.Arg("label", "com.hashicorp.nomad.alloc_id="+a.ID))})
				if err != nil || len(ps) > 0 {
					return false
				}
			}
			return true
		})
	})
	_, _, err := c.Variables().Create(&api.Variable{Path: "nomad/jobs/web", Items: api.VariableItems{"greeting": "hello from a variable"}}, nil)
	must.NoError(t, err)

	out, code := cli(t, url, "", "job", "run", "-detach", writeFile(t, "web.nomad.hcl", dockerWebJob(t, ref, "/")))
	must.Zero(t, code, must.Sprint(out))
	dep := waitDeployment(t, c, "web", 0, 2*time.Minute)
	must.Eq(t, "successful", dep.Status, must.Sprintf("deployment: %s", dep.StatusDescription))

	alloc := runningAlloc(t, c, "web", 0)
	var events []string
	for _, e := range alloc.TaskStates["server"].Events {
		events = append(events, e.Type+": "+e.DisplayMessage)
	}
	must.StrContains(t, strings.Join(events, "\n"), "Driver: Downloading image "+ref)
	addr := hostAddr(t, alloc, "http")
	must.Eq(t, "greeting=hello from a variable", httpBody(t, "http://"+addr+"/"))

	checks, err := c.Allocations().Checks(alloc.ID, nil)
	must.NoError(t, err)
	must.MapLen(t, 1, checks)
	for _, r := range checks {
		must.Eq(t, "success", r.Status, must.Sprintf("check: %+v", r))
	}

	out, code = cli(t, url, "", "job", "run", "-detach", writeFile(t, "web2.nomad.hcl", dockerWebJob(t, ref, "/broken")))
	must.Zero(t, code, must.Sprint(out))
	dep = waitDeployment(t, c, "web", 1, 2*time.Minute)
	must.Eq(t, "failed", dep.Status, must.Sprintf("deployment: %s", dep.StatusDescription))
	must.StrContains(t, dep.StatusDescription, "rolling back")

	// The revert registers the first version's spec again as version 2, which deploys healthy.
	dep = waitDeployment(t, c, "web", 2, 2*time.Minute)
	must.Eq(t, "successful", dep.Status, must.Sprintf("deployment: %s", dep.StatusDescription))
	job, _, err := c.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.Eq(t, "/", job.TaskGroups[0].Services[0].Checks[0].Path)
	alloc = runningAlloc(t, c, "web", 2)
	must.Eq(t, "greeting=hello from a variable", httpBody(t, "http://"+hostAddr(t, alloc, "http")+"/"))
}

// waitDeployment waits for the deployment of the job's version to end, and returns it.
func waitDeployment(t *testing.T, c *api.Client, jobID string, version uint64, limit time.Duration) *api.Deployment {
	t.Helper()
	var dep *api.Deployment
	waitUntil(t, limit, fmt.Sprintf("the deployment of version %d to end", version), func() bool {
		deps, _, err := c.Jobs().Deployments(jobID, false, nil)
		if err != nil {
			return false
		}
		for _, d := range deps {
			if d.JobVersion == version && d.Status != "running" && d.Status != "pending" && d.Status != "initializing" {
				dep = d
				return true
			}
		}
		return false
	})
	return dep
}

// runningAlloc is the job's one running allocation of the version.
func runningAlloc(t *testing.T, c *api.Client, jobID string, version uint64) *api.Allocation {
	t.Helper()
	var id string
	waitUntil(t, time.Minute, fmt.Sprintf("a running allocation of version %d", version), func() bool {
		allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil {
			return false
		}
		for _, a := range allocs {
			if a.JobVersion == version && a.ClientStatus == "running" && a.DesiredStatus == "run" {
				id = a.ID
				return true
			}
		}
		return false
	})
	alloc, _, err := c.Allocations().Info(id, nil)
	must.NoError(t, err)
	return alloc
}

// hostAddr is the host address and port the scheduler gave the allocation's port label.
func hostAddr(t *testing.T, alloc *api.Allocation, label string) string {
	t.Helper()
	must.NotNil(t, alloc.AllocatedResources)
	for _, p := range alloc.AllocatedResources.Shared.Ports {
		if p.Label == label {
			must.Positive(t, p.Value)
			must.NotEq(t, p.Value, p.To, must.Sprint("a dynamic host port differs from the container's"))
			return fmt.Sprintf("%s:%d", p.HostIP, p.Value)
		}
	}
	t.Fatalf("allocation %s has no port %q: %+v", alloc.ID, label, alloc.AllocatedResources.Shared)
	return ""
}

// httpBody GETs the URL until it answers 200 (the container may still be binding).
func httpBody(t *testing.T, url string) string {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second}
	var body string
	waitUntil(t, 30*time.Second, "an answer from "+url, func() bool {
		resp, err := hc.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			return false
		}
		body = string(b)
		return true
	})
	return body
}
