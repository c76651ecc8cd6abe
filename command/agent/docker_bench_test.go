package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
)

// dockerServiceJob is a service whose one docker task serves HTTP on a dynamic port, with a
// nomad service whose http check decides the deployment's health.
func dockerServiceJob(id, image string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("server", "docker")
	task.Config = map[string]any{"image": image, "command": "httpd", "args": []string{"-f", "-p", "8080", "-h", "/"}, "ports": []string{"http"}}
	tg := api.NewTaskGroup("web", 1).AddTask(task)
	tg.Networks = []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http", To: 8080}}}}
	tg.Services = []*api.Service{{Name: id, Provider: "nomad", PortLabel: "http", Checks: []api.ServiceCheck{{
		Name: "http", Type: "http", Path: "/", Interval: time.Second, Timeout: time.Second,
	}}}}
	tg.Update = &api.UpdateStrategy{HealthCheck: new("checks"), MinHealthyTime: new(time.Duration(0)), HealthyDeadline: new(time.Minute)}
	job.AddTaskGroup(tg)
	return job
}

// BenchmarkDockerJobToHealthy measures one `job run` of a docker service until its deployment
// is successful: scheduling, the image pulled from a registry on loopback (docker-registry),
// the container started with its port published, and the http check passing. The image's
// name is untagged on the engine before every run, so every run pulls it; its layers stay on
// the node (they are the shared test image's), so the figure is a pull of a new tag, not a
// cold download.
func BenchmarkDockerJobToHealthy(b *testing.B) {
	dcli := dockertest.Client(b)
	dockertest.BuildImage(b, dcli)
	reg := dockertest.StartRegistry(b, dockertest.RegistryOptions{})
	ref := reg.Push(b, dcli, dockertest.Image, "nomadfork/benchweb:v1")
	b.Cleanup(func() { dockertest.RemoveImage(b, dcli, ref) })
	ta := NewTestClientAgent(b, func(c *Config) { c.LogLevel = "ERROR" })
	c := ta.Client("")

	wait := func(what string, cond func() (bool, error)) {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			ok, err := cond()
			if err != nil {
				b.Fatalf("%s: %v", what, err)
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				b.Fatalf("no %s within 2m", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Job names carry a run token: containers are found by their job label, and other tests'
	// agents may share the engine.
	token := fmt.Sprintf("%x", time.Now().UnixNano())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dockertest.RemoveImage(b, dcli, ref)
		id := fmt.Sprintf("benchweb-%s-%d", token, i)
		b.StartTimer()
		if _, _, err := c.Jobs().Register(dockerServiceJob(id, ref), nil); err != nil {
			b.Fatal(err)
		}
		wait("successful deployment of "+id, func() (bool, error) {
			deps, _, err := c.Jobs().Deployments(id, false, nil)
			if err != nil || len(deps) == 0 {
				return false, nil
			}
			switch deps[0].Status {
			case "successful":
				return true, nil
			case "failed", "cancelled":
				return false, fmt.Errorf("deployment %s: %s", deps[0].Status, deps[0].StatusDescription)
			}
			return false, nil
		})
		b.StopTimer()
		if _, _, err := c.Jobs().Deregister(id, true, nil); err != nil {
			b.Fatal(err)
		}
		// The next run's untagging needs this run's container gone.
		wait("containers of "+id+" to stop", func() (bool, error) {
			ps, err := dcli.ContainerList(b.Context(), container.ListOptions{All: true,
				Filters: filters.NewArgs(filters.Arg("label", "com.hashicorp.nomad.job_name="+id))})
			return err == nil && len(ps) == 0, nil
		})
		b.StartTimer()
	}
}
