//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
	"golang.org/x/sys/unix"
)

// diskTmpfs mounts a tmpfs of size as a data dir, so a test can fill it without touching the
// host's disk. Mounting needs root: without it the test is skipped, saying so.
func diskTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the full-disk tests mount a tmpfs as data_dir, which needs root")
	}
	dir := t.TempDir()
	must.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size))
	// Registered before the agent's own cleanup, so it runs after the agent is stopped.
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// fillTmpfs allocates one file over all the space left on dir's filesystem.
func fillTmpfs(t *testing.T, dir string) string {
	t.Helper()
	var st unix.Statfs_t
	must.NoError(t, unix.Statfs(dir, &st))
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	must.NoError(t, err)
	defer f.Close()
	must.NoError(t, unix.Fallocate(int(f.Fd()), 0, 0, int64(st.Bavail*uint64(st.Bsize))))
	return path
}

func putVar(a *agentProc, path, value string) rawResult {
	body, _ := json.Marshal(map[string]any{"Path": path, "Items": map[string]string{"v": value}})
	return a.raw(http.MethodPut, "/v1/var/"+path, body)
}

// mustHaveVars reads every acknowledged variable back with its value.
func mustHaveVars(t *testing.T, a *agentProc, acked map[string]string) {
	t.Helper()
	for path, want := range acked {
		v, _, err := a.client().Variables().Read(path, nil)
		must.NoError(t, err, must.Sprintf("acknowledged variable %s lost", path))
		must.Eq(t, want, v.Items["v"], must.Sprintf("variable %s", path))
	}
}

// TestFullDisk_RefusesClearlyRecoversAndRestarts is issue 29 on a single server: a data_dir on
// a small filesystem, filled with one file, must refuse writes with a 507 naming the disk and
// the path (and say so on /v1/agent/health), take writes again once the file is removed
// without a restart, lose nothing it acknowledged, and start again afterwards.
func TestFullDisk_RefusesClearlyRecoversAndRestarts(t *testing.T) {
	dataDir := diskTmpfs(t, "256m")
	config, url := writeConfig(t, dataDir, "")
	agent := startAgent(t, config, url)

	acked := map[string]string{}
	for i := range 50 {
		path, value := fmt.Sprintf("app/before-%d", i), fmt.Sprintf("value-%d", i)
		res := putVar(agent, path, value)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
		acked[path] = value
	}
	// A 256 MiB filesystem is below the warning threshold from the start: healthy, with a
	// warning naming the disk, so an operator sees it coming.
	health := agent.raw(http.MethodGet, "/v1/agent/health", nil)
	must.Eq(t, http.StatusOK, health.status, must.Sprint(health.body))
	must.StrContains(t, health.body, "ok; warning: data_dir "+dataDir)

	filler := fillTmpfs(t, dataDir)
	refused := 0
	for i := range 20 {
		path, value := fmt.Sprintf("app/full-%d", i), fmt.Sprintf("value-%d", i)
		res := putVar(agent, path, value)
		if res.status == http.StatusOK {
			acked[path] = value
			continue
		}
		must.Eq(t, http.StatusInsufficientStorage, res.status, must.Sprint(res.body))
		must.StrContains(t, res.body, "no space left on device")
		must.StrContains(t, res.body, dataDir)
		refused++
	}
	must.Positive(t, refused, must.Sprint("no write was refused on a full disk"))
	health = agent.raw(http.MethodGet, "/v1/agent/health", nil)
	must.Eq(t, http.StatusInternalServerError, health.status)
	must.StrContains(t, health.body, dataDir)
	out, _ := cli(t, url, "", "operator", "autopilot", "health")
	must.StrContains(t, out, "Warning: server")
	must.StrContains(t, out, dataDir)
	metricsRes := agent.raw(http.MethodGet, "/v1/metrics", nil)
	must.Eq(t, http.StatusOK, metricsRes.status)
	must.StrContains(t, metricsRes.body, `"nomad.agent.data_dir.free_bytes"`)
	must.StrContains(t, metricsRes.body, `"nomad.agent.data_dir.total_bytes"`)
	// An error line, and one per interval, not one per refused write.
	lines := strings.Count(agent.logs.String(), "the data_dir disk is full")
	must.Positive(t, lines, must.Sprint("a refused write logged nothing"))
	must.Less(t, refused, lines)
	must.RegexMatch(t, regexp.MustCompile(`\[ERROR\][^\n]*the data_dir disk is full`), agent.logs.String())
	must.StrNotContains(t, agent.logs.String(), "segment is sealed")

	must.NoError(t, os.Remove(filler))
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return putVar(agent, "app/after-0", "value-0").status == http.StatusOK
	}), wait.Timeout(30*time.Second), wait.Gap(200*time.Millisecond)))
	acked["app/after-0"] = "value-0"
	for i := 1; i < 20; i++ {
		path, value := fmt.Sprintf("app/after-%d", i), fmt.Sprintf("value-%d", i)
		res := putVar(agent, path, value)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
		acked[path] = value
	}
	mustHaveVars(t, agent, acked)
	health = agent.raw(http.MethodGet, "/v1/agent/health", nil)
	must.Eq(t, http.StatusOK, health.status, must.Sprint(health.body))

	agent = agent.restart()
	mustHaveVars(t, agent, acked)
	res := putVar(agent, "app/after-restart", "x")
	must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
}

// readVarStale reads a variable from the agent's own state, not the leader's.
func readVarStale(a *agentProc, path string) (string, bool) {
	v, _, err := a.client().Variables().Read(path, &api.QueryOptions{AllowStale: true})
	if err != nil || v == nil {
		return "", false
	}
	return v.Items["v"], true
}

// TestFullDisk_ThreeServersKeepServingAndTheFullOneCatchesUp fills the leader's data_dir in a
// three-server cluster: the leader refuses and hands leadership over, the other two keep
// taking writes, and once space is back the full one catches up on every write.
func TestFullDisk_ThreeServersKeepServingAndTheFullOneCatchesUp(t *testing.T) {
	const n = 3
	servers := startServers(t, n, func(int) string { return diskTmpfs(t, "256m") })
	agents := agentsOf(servers)
	leaderRPC, err := agents[0].client().Status().Leader()
	must.NoError(t, err)
	var full, healthy *agentProc
	var fullDir string
	for i, a := range agents {
		if servers[i].rpcAddr == leaderRPC {
			full, fullDir = a, servers[i].dataDir
		} else if healthy == nil {
			healthy = a
		}
	}
	must.NotNil(t, full)

	acked := map[string]string{}
	for i := range 20 {
		path, value := fmt.Sprintf("app/before-%d", i), fmt.Sprintf("value-%d", i)
		res := putVar(healthy, path, value)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
		acked[path] = value
	}

	filler := fillTmpfs(t, fullDir)
	// The first write is forwarded to the full leader, which refuses it (a 507 that crosses the
	// forwarding intact, naming its disk) and hands leadership to one of the others.
	first := putVar(healthy, "app/refused", "x")
	must.Eq(t, http.StatusInsufficientStorage, first.status, must.Sprint(first.body))
	must.StrContains(t, first.body, fullDir)
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		res := putVar(healthy, "app/during-0", "value-0")
		switch res.status {
		case http.StatusOK:
			return nil
		case http.StatusInsufficientStorage:
			return fmt.Errorf("refused by the full leader: %s", res.body)
		}
		t.Fatalf("a write during the fault answered %d: %s", res.status, res.body)
		return nil
	}), wait.Timeout(60*time.Second), wait.Gap(250*time.Millisecond)))
	acked["app/during-0"] = "value-0"
	for i := 1; i < 30; i++ {
		path, value := fmt.Sprintf("app/during-%d", i), fmt.Sprintf("value-%d", i)
		res := putVar(healthy, path, value)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
		acked[path] = value
	}
	newLeader, err := healthy.client().Status().Leader()
	must.NoError(t, err)
	must.NotEq(t, leaderRPC, newLeader, must.Sprint("the full server should have handed over leadership"))
	// It cannot store entries, so it cannot have applied the last write.
	_, has := readVarStale(full, "app/during-29")
	must.False(t, has, must.Sprint("the full server applied a write it could not store"))
	// As a follower it refused the entries the leader sent, for the disk (Raft's own line,
	// which is not rate-limited as ours is).
	must.RegexMatch(t, regexp.MustCompile(`failed to append to logs: error="no space left on device[^\n]*`+regexp.QuoteMeta(fullDir)), full.logs.String())
	// The full one says why it is unhealthy; the others are healthy.
	health := full.raw(http.MethodGet, "/v1/agent/health", nil)
	must.Eq(t, http.StatusInternalServerError, health.status, must.Sprint(health.body))
	must.StrContains(t, health.body, fullDir)
	for _, a := range agents {
		if a != full {
			health := a.raw(http.MethodGet, "/v1/agent/health", nil)
			must.Eq(t, http.StatusOK, health.status, must.Sprint(health.body))
		}
	}

	must.NoError(t, os.Remove(filler))
	caughtUp := func(a *agentProc) {
		t.Helper()
		must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
			for path, want := range acked {
				if got, ok := readVarStale(a, path); !ok || got != want {
					return fmt.Errorf("%s: %s is %q, want %q", a.httpURL, path, got, want)
				}
			}
			return nil
		}), wait.Timeout(60*time.Second), wait.Gap(250*time.Millisecond)))
	}
	caughtUp(full)
	res := putVar(full, "app/after", "x")
	must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
	acked["app/after"] = "x"
	for _, a := range agents {
		caughtUp(a)
	}
	health = full.raw(http.MethodGet, "/v1/agent/health", nil)
	must.Eq(t, http.StatusOK, health.status, must.Sprint(health.body))

	// The server whose disk filled starts again (killed, as a crash would) with its log as the
	// fault left it, keeps every write and takes part in the cluster.
	restarted := full.restart()
	caughtUp(restarted)
	res = putVar(restarted, "app/after-restart", "y")
	must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
	acked["app/after-restart"] = "y"
	caughtUp(restarted)
	for _, a := range agents {
		if a != full {
			caughtUp(a)
		}
	}
}

// TestFullDisk_StartOnAStillFullDisk restarts a server of one (killed, as a crash would) while
// its data_dir is still full. It starts, calls nothing damaged, and cannot lead (Raft cannot
// store the new leader's entry), so a write answers the disk's 507 naming the path, not "No
// cluster leader", and /v1/agent/health says why. Once space is freed it leads and takes
// writes without another restart, with every acknowledged write kept.
func TestFullDisk_StartOnAStillFullDisk(t *testing.T) {
	dataDir := diskTmpfs(t, "256m")
	config, url := writeConfig(t, dataDir, "")
	agent := startAgent(t, config, url)
	acked := map[string]string{}
	for i := range 20 {
		path, value := fmt.Sprintf("app/before-%d", i), fmt.Sprintf("value-%d", i)
		res := putVar(agent, path, value)
		must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
		acked[path] = value
	}
	agent.kill9()
	filler := fillTmpfs(t, dataDir)

	agent = startAgentNoWait(t, config, url)
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		req, err := http.NewRequest(http.MethodGet, url+"/v1/agent/self", nil)
		must.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(200*time.Millisecond)))
	res := putVar(agent, "app/while-full", "x")
	must.Eq(t, http.StatusInsufficientStorage, res.status, must.Sprint(res.body))
	must.StrContains(t, res.body, "no space left on device")
	must.StrContains(t, res.body, dataDir)
	health := agent.raw(http.MethodGet, "/v1/agent/health", nil)
	must.Eq(t, http.StatusInternalServerError, health.status)
	must.StrContains(t, health.body, dataDir)
	must.StrNotContains(t, agent.logs.String(), "damaged")

	must.NoError(t, os.Remove(filler))
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		return putVar(agent, "app/after-0", "value-0").status == http.StatusOK
	}), wait.Timeout(30*time.Second), wait.Gap(200*time.Millisecond)))
	acked["app/after-0"] = "value-0"
	mustHaveVars(t, agent, acked)
	v, _, err := agent.client().Variables().Read("app/while-full", nil)
	must.True(t, err != nil || v == nil, must.Sprint("a refused write was stored"))
	health = agent.raw(http.MethodGet, "/v1/agent/health", nil)
	must.Eq(t, http.StatusOK, health.status, must.Sprint(health.body))
}
