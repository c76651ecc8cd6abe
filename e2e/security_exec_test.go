//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"golang.org/x/sys/unix"
)

// Issue 19, item 1, against the built binary: a token that may only submit jobs registered an
// exec task as root that wrote the kernel's core_pattern (and so ran a program of its choice
// as host root at the next crash) and read the host's /etc/shadow.

// aclAgent starts a server and client with ACLs on and the client block given, and returns
// it with a management token and a token that may only submit jobs.
func aclAgent(t *testing.T, dataDir, clientBlock string) (a *agentProc, mgmt, submit string) {
	t.Helper()
	config, url := writeConfig(t, dataDir, "acl {\n  enabled = true\n}\n"+clientBlock)
	a = startAgent(t, config, url)
	mgmt = bootstrapACL(t, url)
	policy := writeFile(t, "submit.hcl", `namespace "default" { capabilities = ["submit-job"] }`)
	out, code := cli(t, url, mgmt, "acl", "policy", "apply", "submit", policy)
	must.Eq(t, 0, code, must.Sprint(out))
	out, code = cli(t, url, mgmt, "acl", "token", "create", "-name", "submitter", "-policy", "submit", "-json")
	must.Eq(t, 0, code, must.Sprint(out))
	var tok struct{ SecretID string }
	must.NoError(t, json.Unmarshal([]byte(out), &tok))
	return a, mgmt, tok.SecretID
}

func (a *agentProc) clientWith(token string) *api.Client {
	c, err := api.NewClient(&api.Config{Address: a.httpURL, SecretID: token})
	must.NoError(a.t, err)
	return c
}

func rootExecJob(id, script string) *api.Job {
	job := api.NewBatchJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("t", "exec")
	task.User = "root"
	task.Config = map[string]any{"command": "/bin/sh", "args": []string{"-c", script}}
	task.Resources = &api.Resources{CPU: new(100), MemoryMB: new(128)}
	group := api.NewTaskGroup("g", 1).AddTask(task)
	group.RestartPolicy = &api.RestartPolicy{Attempts: new(0), Mode: new("fail")}
	job.AddTaskGroup(group)
	return job
}

// taskEvents lists every task's events in order, as "task: Type: message" lines, for a
// failure message that says why an allocation failed (TaskStates print as pointers).
func taskEvents(states map[string]*api.TaskState) string {
	names := make([]string, 0, len(states))
	for name := range states {
		names = append(names, name)
	}
	sort.Strings(names)
	var lines []string
	for _, name := range names {
		for _, e := range states[name].Events {
			lines = append(lines, fmt.Sprintf("%s: %s: %s %v", name, e.Type, e.DisplayMessage, e.Details))
		}
	}
	return strings.Join(lines, "\n")
}

// onlyAlloc waits for the job's one allocation to reach one of the statuses and returns it.
func onlyAlloc(t *testing.T, c *api.Client, jobID string, statuses ...string) *api.Allocation {
	t.Helper()
	var id string
	waitUntil(t, 60*time.Second, "the allocation of "+jobID+" to be "+strings.Join(statuses, " or "), func() bool {
		allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil || len(allocs) != 1 {
			return false
		}
		for _, s := range statuses {
			if allocs[0].ClientStatus == s {
				id = allocs[0].ID
				return true
			}
		}
		return false
	})
	alloc, _, err := c.Allocations().Info(id, nil)
	must.NoError(t, err)
	return alloc
}

// TestSecurity_E2E_ExecRootDeniedByDefault: with the client's default options, an exec task
// as root (by name or by uid) never starts, and its event names the option that refused it.
func TestSecurity_E2E_ExecRootDeniedByDefault(t *testing.T) {
	requireRoot(t)
	a, mgmt, submit := aclAgent(t, t.TempDir(), "client {\n  enabled = true\n}\n")
	for _, user := range []string{"root", "0"} {
		t.Run(user, func(t *testing.T) {
			id := "as-" + user
			job := rootExecJob(id, "echo ran > /local/ran")
			job.TaskGroups[0].Tasks[0].User = user
			_, _, err := a.clientWith(submit).Jobs().Register(job, nil)
			must.NoError(t, err)
			alloc := onlyAlloc(t, a.clientWith(mgmt), id, "failed")
			var messages []string
			for _, e := range alloc.TaskStates["t"].Events {
				messages = append(messages, e.Type+": "+e.DisplayMessage)
				must.NotEq(t, "Started", e.Type, must.Sprint("the task never starts"))
			}
			must.StrContains(t, strings.Join(messages, "\n"),
				fmt.Sprintf(`Setup Failure: running as user %q`, user))
			must.StrContains(t, strings.Join(messages, "\n"), "client option user.denylist")
		})
	}
}

// escapeScript is what the task tries, each attempt in a subshell: "ESCAPED <name>" for one
// that got through, "held <name>" otherwise. It waits for the test to tell it the host PIDs
// of its shim and of the agent, which its PID namespace does not show it (and the number of
// keyctl on this architecture).
const escapeScript = `
try() { name=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "ESCAPED $name"; else echo "held $name"; fi; }
i=0; while [ ! -s /local/pids ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
read shim agent keyctl < /local/pids
try core_pattern sh -c 'echo core.e2e-escaped > /proc/sys/kernel/core_pattern'
try other_sysctl sh -c 'echo 1 > /proc/sys/vm/drop_caches'
try shadow sh -c 'grep -q . /etc/shadow'
try gshadow sh -c 'grep -q . /etc/gshadow'
try kernel_keys sh -c 'grep -q . /proc/keys'
try mount sh -c 'mkdir -p /tmp/m && mount -t tmpfs none /tmp/m'
try remount_usr mount -o remount,rw /usr
try unmount_mask umount /proc/sys
try unshare unshare -m true
try mknod_dev mknod /dev/null2 c 1 3
try mknod_disk sh -c 'mknod /tmp/sda b 8 0 && head -c 1 /tmp/sda'
try write_usr sh -c 'echo x > /usr/e2e-escaped'
try write_etc sh -c 'echo x > /etc/e2e-escaped'
try write_bin sh -c 'echo x > /bin/e2e-escaped'
try write_sys sh -c 'echo 1 > /sys/kernel/mm/ksm/run'
try see_shim test -e /proc/$shim
try kill_shim kill -9 $shim
try signal_agent kill -0 $agent
try ptrace_shim python3 -c 'import ctypes, sys; libc = ctypes.CDLL(None); sys.exit(0 if libc.ptrace(16, int(sys.argv[1]), 0, 0) == 0 else 1)' $shim
try setuid_gain sh -c 'grep -q "^NoNewPrivs:.*0" /proc/self/status'
try user_namespace unshare -Ur true
try keyring python3 -c 'import ctypes, sys; sys.exit(0 if ctypes.CDLL(None).syscall(int(sys.argv[1]), 0, -3, 0, 0, 0) >= 0 else 1)' $keyctl
echo done
`

// escapeNames are the attempts of escapeScript; each must be reported held.
var escapeNames = []string{
	"core_pattern", "other_sysctl", "shadow", "gshadow", "kernel_keys", "mount", "remount_usr",
	"unmount_mask", "unshare", "mknod_dev", "mknod_disk", "write_usr", "write_etc", "write_bin",
	"write_sys", "see_shim", "kill_shim", "signal_agent", "ptrace_shim", "setuid_gain",
	"user_namespace", "keyring",
}

// TestSecurity_E2E_ExecRootEscapes replays the ways out as an exec task run as root, on a
// client whose operator allowed root (an empty user.denylist): the hardening must hold even
// then. The job is submitted with a token that may only submit jobs.
func TestSecurity_E2E_ExecRootEscapes(t *testing.T) {
	requireRoot(t)
	corePattern, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	must.NoError(t, err)
	t.Cleanup(func() {
		// Should the escape ever work again, the host gets its own value back.
		if now, _ := os.ReadFile("/proc/sys/kernel/core_pattern"); string(now) != string(corePattern) {
			_ = os.WriteFile("/proc/sys/kernel/core_pattern", corePattern, 0o644)
		}
		for _, p := range []string{"/usr/e2e-escaped", "/etc/e2e-escaped", "/bin/e2e-escaped"} {
			_ = os.Remove(p)
		}
	})
	dataDir := t.TempDir()
	a, mgmt, submit := aclAgent(t, dataDir, `client {
  enabled = true
  options {
    "user.denylist" = ""
  }
}
`)
	_, _, err = a.clientWith(submit).Jobs().Register(rootExecJob("escape", escapeScript), nil)
	must.NoError(t, err)
	running := onlyAlloc(t, a.clientWith(mgmt), "escape", "running", "complete", "failed")
	must.Eq(t, "running", running.ClientStatus, must.Sprint(taskEvents(running.TaskStates)),
		must.Sprintf("stderr:\n%s", taskLog(t, a, mgmt, running.ID, "t", "stderr")))

	initPID := hostPIDOf(t, running.ID, "t")
	shimPID := parentOf(t, initPID)
	must.NoError(t, os.WriteFile(filepath.Join(dataDir, "alloc", running.ID, "t", "local", "pids"),
		[]byte(fmt.Sprintf("%d %d %d\n", shimPID, a.cmd.Process.Pid, unix.SYS_KEYCTL)), 0o644))

	done := onlyAlloc(t, a.clientWith(mgmt), "escape", "complete", "failed")
	must.Eq(t, "complete", done.ClientStatus, must.Sprint(taskEvents(done.TaskStates)))
	stdout := taskLog(t, a, mgmt, done.ID, "t", "stdout")
	must.StrContains(t, stdout, "done")
	for _, name := range escapeNames {
		must.StrContains(t, stdout, "held "+name+"\n", must.Sprintf("stdout:\n%s", stdout))
	}
	must.StrNotContains(t, stdout, "ESCAPED")

	// And from the host's side: nothing changed, and the shim lived to record the exit.
	now, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	must.NoError(t, err)
	must.Eq(t, string(corePattern), string(now))
	for _, p := range []string{"/usr/e2e-escaped", "/etc/e2e-escaped", "/bin/e2e-escaped"} {
		must.FileNotExists(t, p)
	}
	for _, e := range done.TaskStates["t"].Events {
		if e.Type == "Terminated" {
			must.Eq(t, 0, e.ExitCode, must.Sprint(e.DisplayMessage))
		}
	}
}

func parentOf(t *testing.T, pid int) int {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	must.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			ppid, err := strconv.Atoi(strings.TrimSpace(v))
			must.NoError(t, err)
			return ppid
		}
	}
	t.Fatalf("no PPid in /proc/%d/status", pid)
	return 0
}

func taskLog(t *testing.T, a *agentProc, token, allocID, task, kind string) string {
	t.Helper()
	req, err := http.NewRequest("GET", a.httpURL+"/v1/client/fs/logs/"+allocID+"?task="+task+"&type="+kind+"&plain=true", nil)
	must.NoError(t, err)
	req.Header.Set("X-Nomad-Token", token)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	must.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must.NoError(t, err)
	must.Eq(t, 200, resp.StatusCode, must.Sprint(string(body)))
	return string(body)
}
