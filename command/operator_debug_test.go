package command

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/command/agent/agenttest"
	"github.com/shoenig/test/must"
)

// readArchive returns every regular file of a tar.gz by name.
func readArchive(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	must.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	must.NoError(t, err)
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		must.NoError(t, err)
		if hdr.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			must.NoError(t, err)
			files[hdr.Name] = b
		}
	}
}

// TestOperatorDebug_Archive captures an ACL agent with a management token: the archive holds
// the cluster files, one interval's listings (the registered job among them), the agent's
// profiles (agent:write allows them) and an index; no file holds a token's secret, neither
// the caller's nor one the cluster stores. -output writes a directory instead.
func TestOperatorDebug_Archive(t *testing.T) {
	ta, mgmt := agenttest.NewACLAgent(t, nil)
	c := ta.Client(mgmt)
	created, _, err := c.ACLTokens().Create(&api.ACLToken{Name: "ops", Type: "management"}, nil)
	must.NoError(t, err)
	code, _, errOut := runCLI(t, ta.URL(), "", "job", "run", "-detach", "-token", mgmt, batchJob(t, "captured", ""))
	must.Zero(t, code, must.Sprint(errOut))

	dir := t.TempDir()
	t.Chdir(dir)
	fixed := time.Date(2026, 12, 5, 10, 11, 12, 0, time.UTC)
	ui := cli.NewMockUi()
	cmd := &OperatorDebugCommand{Meta: Meta{Ui: ui}, now: func() time.Time { return fixed }}
	code = cmd.Run([]string{"-address=" + ta.URL(), "-token=" + mgmt, "-duration=0s", "-pprof-duration=0s", "-node-id=all"})
	must.Zero(t, code, must.Sprint(ui.ErrorWriter.String()))
	out := ui.OutputWriter.String()
	must.StrContains(t, out, "Starting debugger...")
	must.StrContains(t, out, "Created debug archive: nomad-debug-2026-12-05-101112Z.tar.gz")

	files := readArchive(t, filepath.Join(dir, "nomad-debug-2026-12-05-101112Z.tar.gz"))
	root := "nomad-debug-2026-12-05-101112Z/"
	for _, want := range []string{
		"index.json", "cluster/agent-self.json", "cluster/members.json", "cluster/regions.json",
		"cluster/namespaces.json", "cluster/raft-configuration.json", "cluster/scheduler-config.json",
		"interval/0000/jobs.json", "interval/0000/allocations.json", "interval/0000/evaluations.json",
		"interval/0000/nodes.json", "interval/0000/metrics.json", "agent/host.json",
		"agent/pprof/heap.prof", "agent/pprof/goroutine-debug1.txt",
	} {
		_, ok := files[root+want]
		must.True(t, ok, must.Sprintf("archive lacks %s", want))
	}
	_, ok := files[root+"interval/0001/jobs.json"]
	must.False(t, ok, must.Sprint("one interval with -duration=0s"))
	var jobs []map[string]any
	must.NoError(t, json.Unmarshal(files[root+"interval/0000/jobs.json"], &jobs))
	must.SliceLen(t, 1, jobs)
	must.Eq(t, "captured", jobs[0]["ID"])
	var index debugIndex
	must.NoError(t, json.Unmarshal(files[root+"index.json"], &index))
	must.Eq(t, 1, index.Intervals)
	for name, b := range files {
		must.StrNotContains(t, string(b), mgmt, must.Sprint(name))
		must.StrNotContains(t, string(b), created.SecretID, must.Sprint(name))
	}

	outDir := t.TempDir()
	ui = cli.NewMockUi()
	cmd = &OperatorDebugCommand{Meta: Meta{Ui: ui}, now: func() time.Time { return fixed }}
	code = cmd.Run([]string{"-address=" + ta.URL(), "-token=" + mgmt, "-duration=0s", "-pprof-duration=0s", "-output=" + outDir})
	must.Zero(t, code, must.Sprint(ui.ErrorWriter.String()))
	must.StrContains(t, ui.OutputWriter.String(), "Created debug directory: "+filepath.Join(outDir, "nomad-debug-2026-12-05-101112Z"))
	_, err = os.Stat(filepath.Join(outDir, "nomad-debug-2026-12-05-101112Z", "cluster", "agent-self.json"))
	must.NoError(t, err)

	// With a duration, the state is captured every interval and the agent's log followed.
	outDir = t.TempDir()
	ui = cli.NewMockUi()
	cmd = &OperatorDebugCommand{Meta: Meta{Ui: ui}}
	code = cmd.Run([]string{"-address=" + ta.URL(), "-token=" + mgmt, "-duration=3s", "-interval=200ms", "-pprof-duration=0s", "-output=" + outDir})
	must.Zero(t, code, must.Sprint(ui.ErrorWriter.String()))
	entries, err := os.ReadDir(outDir)
	must.NoError(t, err)
	must.SliceLen(t, 1, entries)
	capture := filepath.Join(outDir, entries[0].Name())
	for _, want := range []string{"interval/0000/jobs.json", "interval/0001/jobs.json", "agent/monitor.log"} {
		_, err := os.Stat(filepath.Join(capture, want))
		must.NoError(t, err)
	}

	// Without a token the agent refuses: nothing is written.
	code, _, errOut = runCLI(t, ta.URL(), "", "operator", "debug", "-duration=0s", "-output="+t.TempDir())
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Error querying the agent")
}

// TestOperatorDebug_ServersThroughOneAgent: with -server-id=all the addressed server's data
// lands under agent/ and every other server's under server/<name>/, fetched through the
// addressed agent; the host data there is the other server's own.
func TestOperatorDebug_ServersThroughOneAgent(t *testing.T) {
	servers := agenttest.NewServers(t, 2, nil)
	outDir := t.TempDir()
	ui := cli.NewMockUi()
	cmd := &OperatorDebugCommand{Meta: Meta{Ui: ui}}
	code := cmd.Run([]string{"-address=" + servers[0].URL(), "-duration=1s", "-interval=1s", "-pprof-duration=0s",
		"-server-id=all", "-output=" + outDir})
	must.Zero(t, code, must.Sprint(ui.ErrorWriter.String()))
	entries, err := os.ReadDir(outDir)
	must.NoError(t, err)
	must.SliceLen(t, 1, entries)
	capture := filepath.Join(outDir, entries[0].Name())
	for _, want := range []string{"agent/host.json", "agent/pprof/heap.prof", "agent/monitor.log",
		"server/server-1.global/host.json", "server/server-1.global/pprof/heap.prof",
		"server/server-1.global/pprof/goroutine-debug1.txt", "server/server-1.global/monitor.log"} {
		_, err := os.Stat(filepath.Join(capture, want))
		must.NoError(t, err, must.Sprint(want))
	}
	_, err = os.Stat(filepath.Join(capture, "server", "server-0.global"))
	must.True(t, os.IsNotExist(err), must.Sprint("the addressed server is captured once, under agent/"))
	var host api.HostDataResponse
	b, err := os.ReadFile(filepath.Join(capture, "server/server-1.global/host.json"))
	must.NoError(t, err)
	must.NoError(t, json.Unmarshal(b, &host))
	must.Eq(t, servers[1].Server().Config().NodeID, host.AgentID)
	var index debugIndex
	b, err = os.ReadFile(filepath.Join(capture, "index.json"))
	must.NoError(t, err)
	must.NoError(t, json.Unmarshal(b, &index))
	must.SliceContainsAll(t, []string{"server-0.global", "server-1.global"}, index.ServerIDs)
	must.MapEmpty(t, index.NotCollected, must.Sprint(index.NotCollected))
}

// Keys that name secrets are redacted wherever they are; empty values and other keys stay.
func TestRedactSecrets(t *testing.T) {
	var v any
	must.NoError(t, json.Unmarshal([]byte(`{"SecretID":"s","AccessorID":"a","ACL":{"ReplicationToken":"r","TokenTTL":"1h"},
		"List":[{"encrypt":"k","Name":"n","SignedIdentities":{"t":"jwt"}}],"Empty":{"SecretID":""}}`), &v))
	b, err := json.Marshal(redactSecrets(v))
	must.NoError(t, err)
	must.Eq(t, `{"ACL":{"ReplicationToken":"[REDACTED]","TokenTTL":"1h"},"AccessorID":"a","Empty":{"SecretID":""},`+
		`"List":[{"Name":"n","SignedIdentities":"[REDACTED]","encrypt":"[REDACTED]"}],"SecretID":"[REDACTED]"}`, string(b))
	must.False(t, strings.Contains(string(b), `"s"`))
}
