//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

// requireRoot skips a test of the exec driver off Linux or without root, and fails it in
// CI, which has both.
func requireRoot(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("the exec driver needs Linux and root, which CI has")
	}
	t.Skip("the exec driver needs Linux and root")
}

// dockerWorks reports whether the local Docker Engine answers, and builds the test image
// when it does. CI has an engine: there its absence is a failure, not a skip.
func dockerWorks(t *testing.T) bool {
	t.Helper()
	if err := exec.Command("docker", "info").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("docker info fails in CI: %v", err)
		}
		t.Logf("docker info fails (%v): the docker task is left out", err)
		return false
	}
	dockertest.BuildImage(t, dockertest.Client(t))
	return true
}

// driverTask is one task of the all-drivers job and how to check on its process.
type driverTask struct {
	group string
	task  *api.Task
	// execCmd runs in the task with alloc exec and prints want.
	execCmd []string
	want    string
}

func driverTasks(withDocker bool) []driverTask {
	loop := `echo $$ >> "$NOMAD_TASK_DIR/starts"; echo started; while :; do sleep 0.1; done`
	raw := api.NewTask("t", "raw_exec")
	raw.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", loop}}
	ex := api.NewTask("t", "exec")
	ex.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", loop}}
	ex.Resources = &api.Resources{CPU: new(100), MemoryMB: new(64)}
	out := []driverTask{
		{group: "raw", task: raw, execCmd: []string{"/bin/sh", "-c", "echo in-raw"}, want: "in-raw"},
		{group: "exec", task: ex, execCmd: []string{"/bin/sh", "-c", "echo pid1=$(tr '\\0' ' ' < /proc/1/cmdline | cut -c1-7)"}, want: "pid1=/bin/sh"},
	}
	if withDocker {
		d := api.NewTask("t", "docker")
		d.Config = map[string]any{"image": dockertest.Image, "args": []string{"sleep"}}
		d.KillSignal = "SIGINT"
		d.Resources = &api.Resources{CPU: new(100), MemoryMB: new(64)}
		out = append(out, driverTask{group: "docker", task: d, execCmd: []string{"/taskbin", "echo", "in-docker"}, want: "in-docker"})
	}
	return out
}

// containerRunning is the ID of a task's container and whether it runs, by its name.
func containerRunning(t *testing.T, task, allocID string) (string, bool) {
	out, err := exec.Command("docker", "inspect", "-f", "{{.Id}} {{.State.Running}}", task+"-"+allocID).Output()
	if err != nil {
		return "", false
	}
	id, running, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return id, running == "true"
}

func startsOf(t *testing.T, dataDir, allocID string) []int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dataDir, "alloc", allocID, "t", "local", "starts"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(raw)) {
		n, err := strconv.Atoi(f)
		must.NoError(t, err)
		out = append(out, n)
	}
	return out
}

// TestReattach_Kill9AllDrivers kills the agent (-9) while a task of each driver runs
// (raw_exec, exec and, where the engine answers, docker), starts it again on the same data
// dir, and finds every task re-attached: the same process or container, reported running,
// never started again, and still controllable with the CLI (alloc exec, alloc logs, alloc
// stop).
func TestReattach_Kill9AllDrivers(t *testing.T) {
	requireRoot(t)
	withDocker := dockerWorks(t)
	dataDir := t.TempDir()
	config, url := writeConfig(t, dataDir, clientBlock)
	agent := startAgent(t, config, url)
	c := agent.client()

	tasks := driverTasks(withDocker)
	job := api.NewServiceJob("drivers", "drivers", "global", 50)
	job.Datacenters = []string{"dc1"}
	for _, dt := range tasks {
		job.AddTaskGroup(api.NewTaskGroup(dt.group, 1).AddTask(dt.task))
	}
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)

	allocOf := map[string]string{}
	waitUntil(t, 60*time.Second, "every task to run", func() bool {
		allocs, _, err := c.Jobs().Allocations("drivers", false, nil)
		if err != nil {
			return false
		}
		for _, a := range allocs {
			if a.ClientStatus == "running" {
				allocOf[a.TaskGroup] = a.ID
			}
		}
		return len(allocOf) == len(tasks)
	})
	// What names each task's process: its PID (raw_exec, exec), its container (docker).
	pids, container := map[string]int{}, ""
	for _, dt := range tasks {
		id := allocOf[dt.group]
		switch dt.group {
		case "docker":
			waitUntil(t, 30*time.Second, "the container", func() bool {
				var running bool
				container, running = containerRunning(t, "t", id)
				return running
			})
			t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", "t-"+id).Run() })
		default:
			waitUntil(t, 30*time.Second, "the "+dt.group+" task's start", func() bool { return len(startsOf(t, dataDir, id)) == 1 })
			pids[dt.group] = startsOf(t, dataDir, id)[0]
		}
	}
	// The raw_exec task's PID is the host's; the exec task's is 1 of its namespace and
	// named by the host through the client's allocation API.
	rawPID := pids["raw"]
	t.Cleanup(func() { _ = syscall.Kill(rawPID, syscall.SIGKILL) })
	execHostPID := hostPIDOf(t, allocOf["exec"], "t")
	t.Cleanup(func() { _ = syscall.Kill(execHostPID, syscall.SIGKILL) })

	agent.kill9()
	must.True(t, alive(rawPID), must.Sprint("the raw_exec task outlives the agent"))
	must.True(t, alive(execHostPID), must.Sprint("the exec task outlives the agent"))
	if withDocker {
		_, running := containerRunning(t, "t", allocOf["docker"])
		must.True(t, running, must.Sprint("the container outlives the agent"))
	}

	agent = startAgent(t, config, url)
	c = agent.client()
	waitUntil(t, 60*time.Second, "every task re-attached", func() bool {
		return strings.Count(agent.logs.String(), "re-attached to task") >= len(tasks)
	})
	for _, dt := range tasks {
		id := allocOf[dt.group]
		t.Run(dt.group, func(t *testing.T) {
			a, _, err := c.Allocations().Info(id, nil)
			must.NoError(t, err)
			must.Eq(t, "running", a.ClientStatus)
			must.Eq(t, "running", a.TaskStates["t"].State)
			switch dt.group {
			case "docker":
				got, running := containerRunning(t, "t", id)
				must.Eq(t, container, got, must.Sprint("the same container"))
				must.True(t, running)
			default:
				must.Eq(t, []int{pids[dt.group]}, startsOf(t, dataDir, id), must.Sprint("started once"))
			}

			out, code := cli(t, url, "", append([]string{"alloc", "exec", "-t=false", id}, dt.execCmd...)...)
			must.Eq(t, 0, code, must.Sprint(out))
			must.StrContains(t, out, dt.want)

			want := "started"
			if dt.group == "docker" {
				want = "sleeping"
			}
			out, code = cli(t, url, "", "alloc", "logs", id, "t")
			must.Eq(t, 0, code, must.Sprint(out))
			must.StrContains(t, out, want)

			out, code = cli(t, url, "", "alloc", "stop", "-detach", id)
			must.Eq(t, 0, code, must.Sprint(out))
			waitUntil(t, 30*time.Second, "the task to stop", func() bool {
				a, _, err := c.Allocations().Info(id, nil)
				return err == nil && a.ClientStatus == "complete"
			})
			switch dt.group {
			case "docker":
				waitUntil(t, 30*time.Second, "the container to stop", func() bool {
					_, running := containerRunning(t, "t", id)
					return !running
				})
			case "raw":
				waitUntil(t, 30*time.Second, "the process to end", func() bool { return !alive(rawPID) })
			case "exec":
				waitUntil(t, 30*time.Second, "the process to end", func() bool { return !alive(execHostPID) })
			}
		})
	}
	// The servers replaced the stopped allocations: their tasks are stopped too.
	stopJob(t, c, "drivers")
}

// hostPIDOf finds the host PID of an exec task: the process that is PID 1 of its namespace
// in the task's cgroup.
func hostPIDOf(t *testing.T, allocID, task string) int {
	t.Helper()
	var pid int
	waitUntil(t, 10*time.Second, "the exec task's process", func() bool {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			n, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			// The task's init is PID 1 of its namespace: NSpid's last field.
			status, err := os.ReadFile("/proc/" + e.Name() + "/status")
			if err != nil || !strings.Contains(string(status), "\nNSpid:\t"+e.Name()+"\t1\n") {
				continue
			}
			// Its cgroup names the allocation.
			cg, _ := os.ReadFile("/proc/" + e.Name() + "/cgroup")
			if strings.Contains(string(cg), allocID+"."+task) {
				pid = n
				return true
			}
		}
		return false
	})
	return pid
}
