package agent

import (
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// requireExecDriver skips a test of the exec driver off Linux or without root, but fails it
// in CI, which runs as root: a skip there would hide that the driver went untested.
func requireExecDriver(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the exec driver tests need Linux and root in CI (GOOS %s, euid %d)", runtime.GOOS, os.Geteuid())
	}
	t.Skipf("the exec driver needs Linux and root (GOOS %s, euid %d)", runtime.GOOS, os.Geteuid())
}

func execBatchJob(id string, memoryMB int, config map[string]any) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("box", "exec")
	task.Config = config
	task.Resources = &api.Resources{CPU: new(100), MemoryMB: new(memoryMB)}
	job.AddTaskGroup(api.NewTaskGroup("box", 1).AddTask(task))
	job.TaskGroups[0].RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	return job
}

func taskEvents(t *testing.T, c *api.Client, allocID, task string) []*api.TaskEvent {
	t.Helper()
	alloc, _, err := c.Allocations().Info(allocID, nil)
	must.NoError(t, err)
	return alloc.TaskStates[task].Events
}

// TestExecDriver_ThroughAgent: the node fingerprints the exec driver, a job's exec task runs
// isolated (PID 1 of its namespace, as nobody, in its chroot) with its output in the
// allocation's logs, and alloc exec runs commands inside it.
func TestExecDriver_ThroughAgent(t *testing.T) {
	requireExecDriver(t)
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")

	nodes, _, err := c.Nodes().List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, nodes)
	must.True(t, nodes[0].Drivers["exec"].Healthy, must.Sprint(nodes[0].Drivers["exec"]))

	_, _, err = c.Jobs().Register(execBatchJob("hello", 64, map[string]any{
		"command": "/bin/sh", "args": []string{"-c", `echo "pid=$$ uid=$(id -u) dir=$NOMAD_TASK_DIR"; ls /local >/dev/null`},
	}), nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "hello", map[string]int{"complete": 1})
	res := doHTTP(t, ta, "GET", logsPath(allocs[0].ID, url.Values{"task": {"box"}, "type": {"stdout"}, "plain": {"true"}}), nil, nil)
	must.Eq(t, "pid=1 uid=65534 dir=/local\n", res.body)

	t.Run("alloc exec runs in the task", func(t *testing.T) {
		job := testJob("svc")
		job.TaskGroups[0].Tasks[0].Driver = "exec"
		alloc := runningAlloc(t, c, job)
		out := execOfficial(t, c, alloc, "sleep", false, "", "/bin/sh", "-c", `id -u; tr '\0' ' ' < /proc/1/cmdline; echo; pwd`)
		must.NoError(t, out.err)
		must.Eq(t, 0, out.code)
		must.Eq(t, "65534\n/bin/sleep 600 \n/\n", out.stdout)
		tty := execOfficial(t, c, alloc, "sleep", true, "", "/bin/sh", "-c", "test -t 1 && echo on-a-tty")
		must.NoError(t, tty.err)
		must.StrContains(t, tty.stdout, "on-a-tty")
	})
}

// TestExecDriver_FailuresAreEvents: an OOM kill and a config the driver refuses both fail the
// allocation with an event that says so.
func TestExecDriver_FailuresAreEvents(t *testing.T) {
	requireExecDriver(t)
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")

	t.Run("oom killed", func(t *testing.T) {
		_, _, err := c.Jobs().Register(execBatchJob("hog", 16, map[string]any{
			"command": "/bin/sh", "args": []string{"-c", "dd if=/dev/zero of=/dev/null bs=96M count=1"},
		}), nil)
		must.NoError(t, err)
		failed := allocsIn(t, c, "hog", map[string]int{"failed": 1})
		var terminated *api.TaskEvent
		for _, e := range taskEvents(t, c, failed[0].ID, "box") {
			if e.Type == "Terminated" {
				terminated = e
			}
		}
		must.NotNil(t, terminated)
		must.StrContains(t, terminated.DisplayMessage, "OOM Killed")
		must.Eq(t, "true", terminated.Details["oom_killed"])
		// The kernel kills the biggest process of the task: dd, whose shell then exits with
		// 137, or the shell itself.
		must.True(t, terminated.Signal == 9 || terminated.ExitCode == 137, must.Sprint(terminated))
	})
	t.Run("unknown config key", func(t *testing.T) {
		_, _, err := c.Jobs().Register(execBatchJob("badkey", 32, map[string]any{"command": "/bin/true", "ipc_mode": "host"}), nil)
		must.NoError(t, err)
		failed := allocsIn(t, c, "badkey", map[string]int{"failed": 1})
		var messages []string
		for _, e := range taskEvents(t, c, failed[0].ID, "box") {
			messages = append(messages, e.Type+": "+e.DisplayMessage)
		}
		must.StrContains(t, strings.Join(messages, "\n"), `Driver Failure: exec: unknown config key "ipc_mode"`)
	})
}

// TestExecDriver_AllocExecACL: the exec driver isolates its tasks' filesystem, so running a
// command in one takes alloc-exec, and alloc-node-exec alone is not enough.
func TestExecDriver_AllocExecACL(t *testing.T) {
	requireExecDriver(t)
	ta, root := newTestACLClientAgent(t)
	mgmt := ta.Client(root)
	job := testJob("iso")
	job.TaskGroups[0].Tasks[0].Driver = "exec"
	alloc := runningAlloc(t, mgmt, job)
	mustUpsertPolicy(t, mgmt, "exec", `namespace "default" { capabilities = ["alloc-exec"] }`)
	mustUpsertPolicy(t, mgmt, "node-exec", `namespace "default" { capabilities = ["alloc-node-exec"] }`)
	secrets := map[string]string{"none": ""}
	for _, p := range []string{"exec", "node-exec"} {
		secrets[p] = mustCreateToken(t, mgmt, p, p).SecretID
	}
	cases := []struct {
		name   string
		token  string
		denied bool
	}{
		{name: "alloc-exec", token: "exec"},
		{name: "alloc-node-exec only", token: "node-exec", denied: true},
		{name: "no token", token: "none", denied: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := execOfficial(t, ta.Client(secrets[tc.token]), alloc, "sleep", false, "in\n", "cat")
			if tc.denied {
				status, body := responseError(t, res.err)
				must.Eq(t, 403, status)
				must.Eq(t, `Permission denied: alloc-exec capability required in namespace "default"`, body)
				return
			}
			must.NoError(t, res.err)
			must.Eq(t, 0, res.code)
			must.Eq(t, "in\n", res.stdout)
		})
	}
}

// TestExecDriver_AllowCapsOption: plugin "exec" { config { allow_caps } } reaches the driver,
// and a capability name it does not know stops the agent instead of being ignored.
func TestExecDriver_AllowCapsOption(t *testing.T) {
	cases := []struct {
		name   string
		hcl    string
		errHas string
	}{
		{name: "known capabilities", hcl: `plugin "exec" {
  config {
    allow_caps = ["chown", "CAP_NET_RAW"]
  }
}
`},
		{name: "unknown capability", hcl: `plugin "exec" {
  config {
    allow_caps = ["chown", "fly"]
  }
}
`, errHas: `allow_caps: unknown capability "fly"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfigString(t, "agent.hcl", tc.hcl)
			must.NoError(t, err)
			a := &Agent{config: DefaultConfig().Merge(cfg), logger: hclog.NewNullLogger()}
			_, err = a.clientDrivers(t.TempDir(), t.TempDir())
			if tc.errHas != "" {
				must.ErrorContains(t, err, tc.errHas)
				return
			}
			must.NoError(t, err)
		})
	}
}

// TestSecurity_ExecRootDeniedThroughAgent: a token that may only submit jobs registers an exec
// task as root; with the agent's default client options it never starts, and its event names
// user.denylist. An operator who sets user.denylist to "" lets it run (as root).
func TestSecurity_ExecRootDeniedThroughAgent(t *testing.T) {
	requireExecDriver(t)
	cases := []struct {
		name    string
		options map[string]string
		denied  bool
	}{
		{name: "default options", denied: true},
		{name: "root allowed by the operator", options: map[string]string{"user.denylist": ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ta := NewTestClientAgent(t, func(c *Config) {
				c.ACL.Enabled = true
				c.Client.Options = tc.options
			})
			var reply structs.ACLTokenUpsertResponse
			must.NoError(t, ta.Server().Endpoints.ACL.Bootstrap(&nomad.BootstrapRequest{}, &reply))
			mgmt := ta.Client(reply.Tokens[0].SecretID)
			mustUpsertPolicy(t, mgmt, "submit", `namespace "default" { capabilities = ["submit-job"] }`)
			submit := ta.Client(mustCreateToken(t, mgmt, "submitter", "submit").SecretID)

			job := execBatchJob("as-root", 32, map[string]any{"command": "/bin/sh", "args": []string{"-c", "test $(id -u) = 0"}})
			job.TaskGroups[0].Tasks[0].User = "root"
			_, _, err := submit.Jobs().Register(job, nil)
			must.NoError(t, err)
			if !tc.denied {
				allocsIn(t, mgmt, "as-root", map[string]int{"complete": 1})
				return
			}
			failed := allocsIn(t, mgmt, "as-root", map[string]int{"failed": 1})
			var messages []string
			for _, e := range taskEvents(t, mgmt, failed[0].ID, "box") {
				messages = append(messages, e.Type+": "+e.DisplayMessage)
			}
			must.StrContains(t, strings.Join(messages, "\n"),
				`Setup Failure: running as user "root" is denied by the client option user.denylist for driver exec`)
		})
	}
}
