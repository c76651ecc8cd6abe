package golden

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/nomad/api"
)

// AgentConfig is the configuration a golden data_dir is written and opened with: one server
// with ACLs on, no client (the objects are Raft state; no task has to run).
func AgentConfig(dataDir string, http, rpc, serf int) string {
	return fmt.Sprintf(`
name      = "golden"
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %d
  rpc  = %d
  serf = %d
}
server {
  enabled          = true
  bootstrap_expect = 1
}
acl {
  enabled = true
}
`, dataDir, http, rpc, serf)
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Agent is one agent process started by StartAgent.
type Agent struct {
	Cmd  *exec.Cmd
	Addr string
	Logs *bytes.Buffer
}

// StartAgent starts binary with AgentConfig over dataDir and waits until it has a leader
// that answers (a 403 to an anonymous job list is an answer).
func StartAgent(binary, dataDir, configDir string) (*Agent, error) {
	var ports [3]int
	for i := range ports {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	cfg := filepath.Join(configDir, "golden.hcl")
	if err := os.WriteFile(cfg, []byte(AgentConfig(dataDir, ports[0], ports[1], ports[2])), 0o600); err != nil {
		return nil, err
	}
	a := &Agent{Addr: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), Logs: &bytes.Buffer{}}
	a.Cmd = exec.Command(binary, "agent", "-config", cfg)
	a.Cmd.Stdout, a.Cmd.Stderr = a.Logs, a.Logs
	if err := a.Cmd.Start(); err != nil {
		return nil, err
	}
	c, err := a.Client("")
	if err != nil {
		a.Kill()
		return nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if leader, err := c.Status().Leader(); err == nil && leader != "" {
			if _, _, err := c.Jobs().List(nil); err == nil || strings.Contains(err.Error(), "403") {
				return a, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.Kill()
	return nil, fmt.Errorf("agent at %s never elected a leader:\n%s", a.Addr, a.Logs.String())
}

// Client is an API client of the agent with token.
func (a *Agent) Client(token string) (*api.Client, error) {
	return api.NewClient(&api.Config{Address: a.Addr, SecretID: token})
}

// Kill ends the agent with SIGKILL, as a crash would.
func (a *Agent) Kill() {
	if a.Cmd.ProcessState != nil {
		return
	}
	_ = a.Cmd.Process.Signal(syscall.SIGKILL)
	_ = a.Cmd.Wait()
}

// CLI runs a command of binary against the agent and returns its output.
func (a *Agent) CLI(binary, token string, args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "NOMAD_ADDR="+a.Addr, "NOMAD_TOKEN="+token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("nomad %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func goldenJob(ns, id string, meta map[string]string) *api.Job {
	job := api.NewServiceJob(id, id, "global", 50)
	job.Namespace = &ns
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("server", "raw_exec")
	task.Config = map[string]any{"command": "/bin/sleep", "args": []string{"600"}}
	job.AddTaskGroup(api.NewTaskGroup("web", 1).AddTask(task))
	job.Meta = meta
	return job
}

// Generate starts binary on a new data_dir, writes every kind of object the manifest lists,
// saves a snapshot (which also makes the server take a Raft snapshot of its own), writes
// more after it, and kills the agent with -9. It leaves out/data_dir.tar.gz,
// out/snapshot.snap and out/manifest.json.
func Generate(binary, out string, logf func(string, ...any)) (err error) {
	work, err := os.MkdirTemp("", "golden-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	dataDir := filepath.Join(work, "data")
	a, err := StartAgent(binary, dataDir, work)
	if err != nil {
		return err
	}
	defer func() {
		a.Kill()
		if err != nil {
			err = fmt.Errorf("%w\nagent output:\n%s", err, a.Logs.String())
		}
	}()
	version, err := a.CLI(binary, "", "version")
	if err != nil {
		return err
	}
	m := &Manifest{Format: ManifestFormat, Binary: strings.TrimSpace(version)}

	anon, err := a.Client("")
	if err != nil {
		return err
	}
	boot, _, err := anon.ACLTokens().Bootstrap(nil)
	if err != nil {
		return fmt.Errorf("acl bootstrap: %w", err)
	}
	m.ManagementToken = boot.SecretID
	m.Tokens = append(m.Tokens, Token{AccessorID: boot.AccessorID, SecretID: boot.SecretID, Name: boot.Name, Type: boot.Type, InSnapshot: true})
	c, err := a.Client(boot.SecretID)
	if err != nil {
		return err
	}
	inSnapshot := true

	addPolicy := func(name, desc, rules string) error {
		p := &api.ACLPolicy{Name: name, Description: desc, Rules: rules}
		if _, err := c.ACLPolicies().Upsert(p, nil); err != nil {
			return fmt.Errorf("policy %s: %w", name, err)
		}
		m.Policies = append(m.Policies, Policy{Name: name, Description: desc, Rules: rules, InSnapshot: inSnapshot})
		return nil
	}
	addToken := func(name string, policies ...string) error {
		tok, _, err := c.ACLTokens().Create(&api.ACLToken{Name: name, Type: "client", Policies: policies}, nil)
		if err != nil {
			return fmt.Errorf("token %s: %w", name, err)
		}
		m.Tokens = append(m.Tokens, Token{AccessorID: tok.AccessorID, SecretID: tok.SecretID, Name: tok.Name, Type: tok.Type, Policies: tok.Policies, InSnapshot: inSnapshot})
		return nil
	}
	addNamespace := func(name, desc string) error {
		if _, err := c.Namespaces().Register(&api.Namespace{Name: name, Description: desc}, nil); err != nil {
			return fmt.Errorf("namespace %s: %w", name, err)
		}
		m.Namespaces = append(m.Namespaces, Namespace{Name: name, Description: desc, InSnapshot: inSnapshot})
		return nil
	}
	jobs := map[string]*Job{}
	register := func(ns, id string, meta map[string]string) error {
		if _, _, err := c.Jobs().Register(goldenJob(ns, id, meta), &api.WriteOptions{Namespace: ns}); err != nil {
			return fmt.Errorf("job %s/%s: %w", ns, id, err)
		}
		j := jobs[ns+"/"+id]
		if j == nil {
			j = &Job{Namespace: ns, ID: id}
			jobs[ns+"/"+id] = j
		}
		return nil
	}
	setVar := func(ns, path string, items map[string]string) error {
		if _, _, err := c.Variables().Create(&api.Variable{Namespace: ns, Path: path, Items: items}, &api.WriteOptions{Namespace: ns}); err != nil {
			return fmt.Errorf("variable %s/%s: %w", ns, path, err)
		}
		for i := range m.Variables {
			if m.Variables[i].Namespace == ns && m.Variables[i].Path == path {
				m.Variables[i].Items = items
				return nil
			}
		}
		m.Variables = append(m.Variables, Variable{Namespace: ns, Path: path, Items: items})
		return nil
	}
	// record reads back every job's state into the manifest, as of now.
	record := func() error {
		for _, j := range jobs {
			q := &api.QueryOptions{Namespace: j.Namespace}
			got, _, err := c.Jobs().Info(j.ID, q)
			if err != nil {
				return fmt.Errorf("reading job %s/%s: %w", j.Namespace, j.ID, err)
			}
			all, _, _, err := c.Jobs().Versions(j.ID, false, q)
			if err != nil {
				return err
			}
			j.Version, j.Versions, j.Stop, j.Meta = *got.Version, len(all), got.Stop != nil && *got.Stop, got.Meta
		}
		return nil
	}

	steps := []func() error{
		func() error { return addPolicy("readonly", "reads jobs", `namespace "*" { policy = "read" }`) },
		func() error {
			return addPolicy("deployer", "runs jobs in prod", `namespace "prod" { policy = "write" }
node { policy = "read" }`)
		},
		func() error { return addToken("reader", "readonly") },
		func() error { return addToken("deployer", "deployer", "readonly") },
		func() error { return addNamespace("prod", "production") },
		func() error { return addNamespace("staging", "") },
		func() error { return register("default", "web", map[string]string{"rev": "1"}) },
		func() error { return register("default", "web", map[string]string{"rev": "2"}) },
		func() error { return register("prod", "api", map[string]string{"tier": "backend"}) },
		func() error { return register("prod", "api", map[string]string{"tier": "backend", "rev": "2"}) },
		func() error { return register("default", "stopped", nil) },
		func() error {
			_, _, err := c.Jobs().Deregister("stopped", false, nil)
			return err
		},
		func() error { return register("prod", "gone", map[string]string{"rev": "1"}) },
		func() error { return register("prod", "gone", map[string]string{"rev": "2"}) },
		func() error {
			delete(jobs, "prod/gone")
			_, _, err := c.Jobs().Deregister("gone", true, &api.WriteOptions{Namespace: "prod"})
			return err
		},
		func() error {
			return setVar("default", "app/config", map[string]string{"db": "postgres", "port": "5432"})
		},
		func() error { return setVar("prod", "app/secret", map[string]string{"key": "s3cr3t"}) },
		func() error { return record() },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	if err := recordPurges(c, m, true); err != nil {
		return err
	}
	for _, j := range jobs {
		v := j.Version
		j.SnapshotVersion, j.SnapshotVersions, j.SnapshotMeta = &v, j.Versions, j.Meta
	}
	for i := range m.Variables {
		m.Variables[i].SnapshotItems = m.Variables[i].Items
	}

	// The saved archive; saving also makes the server write a Raft snapshot into data_dir.
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	snapPath := filepath.Join(out, SnapshotFile)
	if _, err := a.CLI(binary, boot.SecretID, "operator", "snapshot", "save", snapPath); err != nil {
		return err
	}
	info, err := a.CLI(binary, boot.SecretID, "operator", "snapshot", "inspect", "-json", snapPath)
	if err != nil {
		return err
	}
	var snapInfo struct{ Index uint64 }
	if err := json.Unmarshal([]byte(info), &snapInfo); err != nil {
		return fmt.Errorf("snapshot inspect: %w: %s", err, info)
	}
	m.SnapshotIndex = snapInfo.Index
	if ents, err := os.ReadDir(filepath.Join(dataDir, "server", "raft", "snapshots")); err != nil || len(ents) == 0 {
		return fmt.Errorf("the server took no Raft snapshot of its own in %s (%v)", dataDir, err)
	}
	logf("snapshot saved at index %d", m.SnapshotIndex)

	// Log entries after the snapshot: new objects and changes to ones it holds.
	inSnapshot = false
	after := []func() error{
		func() error { return register("default", "web", map[string]string{"rev": "3"}) },
		func() error { return register("staging", "after", map[string]string{"rev": "1"}) },
		func() error {
			return setVar("default", "app/config", map[string]string{"db": "postgres", "port": "6432"})
		},
		func() error { return setVar("staging", "app/new", map[string]string{"x": "1"}) },
		func() error {
			return addPolicy("late", "written after the snapshot", `namespace "staging" { policy = "read" }`)
		},
		func() error { return addToken("late", "late") },
		func() error { return addNamespace("late", "after the snapshot") },
		func() error { return register("staging", "purged-late", nil) },
		func() error {
			delete(jobs, "staging/purged-late")
			_, _, err := c.Jobs().Deregister("purged-late", true, &api.WriteOptions{Namespace: "staging"})
			return err
		},
		func() error { return record() },
	}
	for _, step := range after {
		if err := step(); err != nil {
			return err
		}
	}
	if err := recordPurges(c, m, false); err != nil {
		return err
	}
	for _, key := range sortedKeys(jobs) {
		m.Jobs = append(m.Jobs, *jobs[key])
	}
	// Nothing flushes or shuts down: the data dir is what a crash leaves.
	a.Kill()
	logf("agent killed with -9")

	if err := TarGz(dataDir, filepath.Join(out, DataDirFile)); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, ManifestFile), append(raw, '\n'), 0o644)
}

// recordPurges adds the purge records not yet in m.
func recordPurges(c *api.Client, m *Manifest, inSnapshot bool) error {
	var recs []struct {
		ID, Namespace, JobID string
		JobVersion           uint64
	}
	if _, err := c.Raw().Query("/v1/jobs/purged", &recs, &api.QueryOptions{Namespace: "*"}); err != nil {
		return fmt.Errorf("purge history: %w", err)
	}
	known := map[string]bool{}
	for _, p := range m.Purged {
		known[p.RecordID] = true
	}
	for _, r := range recs {
		if !known[r.ID] {
			m.Purged = append(m.Purged, Purged{Namespace: r.Namespace, JobID: r.JobID, RecordID: r.ID, JobVersion: r.JobVersion, InSnapshot: inSnapshot})
		}
	}
	return nil
}

func sortedKeys[V any](in map[string]V) []string {
	out := make([]string, 0, len(in))
	for k := range in {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TarGz writes dir's tree to file as a gzipped tar with paths relative to dir.
func TarGz(dir, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	err = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = time.Unix(0, 0), time.Time{}, time.Time{}
		hdr.Uname, hdr.Gname, hdr.Uid, hdr.Gid = "", "", 0, 0
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

// Extract unpacks a TarGz archive into dir, refusing any path that leaves it.
func Extract(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(target, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("%s: path %q leaves the directory", file, hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, os.FileMode(hdr.Mode)|0o700); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return err
			}
			dst, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(hdr.Mode)&0o777)
			if err != nil {
				return err
			}
			if _, err := io.Copy(dst, tr); err != nil {
				dst.Close()
				return err
			}
			if err := dst.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: %q is neither a file nor a directory", file, hdr.Name)
		}
	}
}
