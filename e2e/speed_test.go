//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

// Measurements of issue 11's "Speed", run with `make e2e-speed` (they also run, quietly, in
// `make e2e`). They report figures with t.Logf and assert no timing; the one bound asserted is
// the agent's memory with 100 running tasks.

// rssMB is the resident memory of a process in MiB (VmRSS of /proc/<pid>/status).
func rssMB(t *testing.T, pid int) float64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	must.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			must.NoError(t, err)
			return float64(kb) / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// runningCount is how many allocations of the job run.
func runningCount(c *api.Client, jobID string) int {
	allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		return 0
	}
	n := 0
	for _, a := range allocs {
		if a.ClientStatus == "running" {
			n++
		}
	}
	return n
}

// TestSpeed_AgentRSS100Tasks runs 100 raw_exec `sleep` tasks and, where the exec driver can
// run, 100 exec ones, on one agent (server and client), and keeps its resident memory under
// 100 MiB with all of them running.
func TestSpeed_AgentRSS100Tasks(t *testing.T) {
	drivers := []string{"raw_exec"}
	if os.Geteuid() == 0 {
		drivers = append(drivers, "exec")
	}
	for _, driver := range drivers {
		t.Run(driver, func(t *testing.T) {
			config, url := writeConfig(t, t.TempDir(), clientBlock)
			agent := startAgent(t, config, url)
			c := agent.client()
			idle := rssMB(t, agent.cmd.Process.Pid)

			const n = 100
			job := api.NewServiceJob("many", "many", "global", 50)
			job.Datacenters = []string{"dc1"}
			task := api.NewTask("t", driver)
			task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"3600"}}
			task.Resources = &api.Resources{CPU: new(10), MemoryMB: new(10)}
			job.AddTaskGroup(api.NewTaskGroup("g", n).AddTask(task))
			start := time.Now()
			_, _, err := c.Jobs().Register(job, nil)
			must.NoError(t, err)
			t.Cleanup(func() { stopJob(t, c, "many") })
			waitUntil(t, 180*time.Second, "100 tasks to run", func() bool { return runningCount(c, "many") == n })
			took := time.Since(start)
			// Some more status rounds with everything running: the figure is the steady one.
			for range 3 {
				_, _, err := c.Jobs().Allocations("many", false, nil)
				must.NoError(t, err)
			}
			rss := rssMB(t, agent.cmd.Process.Pid)
			t.Logf("%s: agent RSS idle %.1f MiB, with %d running tasks %.1f MiB (all running %s after register)", driver, idle, n, rss, took.Round(time.Millisecond))
			must.Less(t, 100.0, rss, must.Sprintf("agent RSS %.1f MiB with %d %s tasks", rss, n, driver))
		})
	}
}

// median of durations.
func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// TestSpeed_TaskStartLatency measures, per driver, the time from registering a one-task job
// to the allocation reported running, and the setup time of an alloc exec session (the
// round trip of `true` through the HTTP API).
func TestSpeed_TaskStartLatency(t *testing.T) {
	const rounds = 5
	type driverCase struct {
		driver string
		config map[string]any
		exec   []string
	}
	cases := []driverCase{{"raw_exec", map[string]any{"command": "/bin/sleep", "args": []string{"600"}}, []string{"/bin/true"}}}
	if os.Geteuid() == 0 {
		cases = append(cases, driverCase{"exec", map[string]any{"command": "/bin/sleep", "args": []string{"600"}}, []string{"/bin/true"}})
	}
	if exec.Command("docker", "info").Run() == nil {
		dockertest.BuildImage(t, dockertest.Client(t))
		cases = append(cases, driverCase{"docker", map[string]any{"image": dockertest.Image, "args": []string{"sleep"}}, []string{"/taskbin", "exit", "0"}})
	}
	config, url := writeConfig(t, t.TempDir(), clientBlock)
	c := startAgent(t, config, url).client()
	for _, dc := range cases {
		t.Run(dc.driver, func(t *testing.T) {
			var starts, sessions []time.Duration
			for i := range rounds {
				jobID := "lat-" + strings.ReplaceAll(dc.driver, "_", "-") + "-" + strconv.Itoa(i)
				job := api.NewServiceJob(jobID, jobID, "global", 50)
				job.Datacenters = []string{"dc1"}
				task := api.NewTask("t", dc.driver)
				task.Config = dc.config
				task.KillSignal = "SIGINT"
				task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
				job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
				begin := time.Now()
				_, _, err := c.Jobs().Register(job, nil)
				must.NoError(t, err)
				var alloc *api.Allocation
				// Polled every 10ms (waitUntil's 100ms would round the figure up).
				pollUntil(t, 60*time.Second, "the task to run", func() bool {
					allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
					if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "running" {
						return false
					}
					alloc, _, err = c.Allocations().Info(allocs[0].ID, nil)
					return err == nil
				})
				starts = append(starts, time.Since(begin))

				var stdout, stderr bytes.Buffer
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				begin = time.Now()
				code, err := c.Allocations().Exec(ctx, alloc, "t", false, dc.exec, strings.NewReader(""), &stdout, &stderr, nil, nil)
				sessions = append(sessions, time.Since(begin))
				cancel()
				must.NoError(t, err)
				must.Eq(t, 0, code, must.Sprintf("stderr %q", stderr.String()))

				stopJob(t, c, jobID)
			}
			t.Logf("%s: register -> running median %s (min %s, max %s); alloc exec session median %s over %d rounds",
				dc.driver, median(starts).Round(time.Millisecond), slicesMin(starts).Round(time.Millisecond),
				slicesMax(starts).Round(time.Millisecond), median(sessions).Round(time.Millisecond), rounds)
		})
	}
}

func slicesMin(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

func slicesMax(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// pollUntil is waitUntil with a 10ms gap, for measurements.
func pollUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stopJob stops a job and waits until the client stopped every task of it: the tasks outlive
// the agent, so one killed before would leave them running.
func stopJob(t *testing.T, c *api.Client, jobID string) {
	t.Helper()
	_, _, err := c.Jobs().Deregister(jobID, false, nil)
	must.NoError(t, err)
	waitUntil(t, 120*time.Second, "every task of "+jobID+" to stop", func() bool {
		allocs, _, err := c.Jobs().Allocations(jobID, true, nil)
		if err != nil {
			return false
		}
		for _, a := range allocs {
			if a.ClientStatus != "complete" && a.ClientStatus != "failed" && a.ClientStatus != "lost" {
				return false
			}
		}
		return true
	})
}
