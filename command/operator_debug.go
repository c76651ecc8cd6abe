package command

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
)

// OperatorDebugCommand collects the cluster's state, the addressed agent's metrics, logs
// and profiles into one archive an operator can hand to whoever debugs the cluster.
type OperatorDebugCommand struct {
	Meta

	// now is the clock that names the capture; nil means time.Now.
	now           func() time.Time
	duration      time.Duration
	interval      time.Duration
	pprofDuration time.Duration
	output        string
	nodeIDs       string
	serverIDs     string
	logLevel      string
	maxNodes      int
	verbose       bool
}

func (c *OperatorDebugCommand) Help() string {
	return helpText(`
Usage: nomad operator debug [options]

  Build an archive of debug data: the addressed agent's configuration
  (secrets redacted), members, regions, namespaces, node pools, the Raft
  and autopilot state, the scheduler configuration, and every -interval
  until -duration has passed a snapshot of the jobs, allocations,
  evaluations, deployments, nodes and metrics. The host data, log lines and
  pprof profiles of the addressed agent, of the servers named with
  -server-id and of the nodes named with -node-id are included when each
  serves them (profiles need enable_debug, or agent:write with ACLs; the
  agent whose data it is decides). The archive is nomad-debug-<time>.tar.gz
  in the current directory, or a directory under -output.

  The archive's contents should still be reviewed before sharing.
`, optionsHelp("Debug", c.options()))
}

func (c *OperatorDebugCommand) options() []option {
	return []option{
		flagOpt(&c.duration, 2*time.Minute, "-duration=<duration>", "How long to capture. The default is 2m."),
		flagOpt(&c.interval, 30*time.Second, "-interval=<duration>", "How often to snapshot the cluster's state during -duration. The\ndefault is 30s."),
		flagOpt(&c.output, "", "-output=<path>", "Write the capture as a directory under this path instead of an archive\nin the current directory."),
		flagOpt(&c.nodeIDs, "", "-node-id=<ids>", "Comma-separated node IDs (or prefixes) to read in full, or \"all\"."),
		flagOpt(&c.maxNodes, 10, "-max-nodes=<n>", "At most this many nodes with -node-id=all. The default is 10."),
		flagOpt(&c.serverIDs, "", "-server-id=<ids>", "Comma-separated server names, \"leader\" or \"all\": the servers whose host\ndata, logs and profiles are collected (through the addressed agent)."),
		flagOpt(&c.logLevel, "TRACE", "-log-level=<level>", "Level of the agent log lines captured. The default is TRACE."),
		flagOpt(&c.pprofDuration, time.Second, "-pprof-duration=<duration>", "Length of the CPU profile. The default is 1s."),
		boolOpt(&c.verbose, "-verbose", "Print each path that could not be collected and why."),
	}
}

func (c *OperatorDebugCommand) Synopsis() string { return "Build a debug archive" }

// debugCapture is one run: where files go and what went wrong on the way.
type debugCapture struct {
	client  *api.Client
	dir     string
	index   debugIndex
	verbose bool
	ui      func(string)
	// pending follow agents' logs; intervals runs them alongside and waits for them.
	pending []func()
	// mu guards index.NotCollected, which the log follower and the snapshots both add to.
	mu sync.Mutex
}

// debugIndex is index.json at the archive's root: what was asked for and what could not be
// collected, so a reader knows a missing file is not an empty result.
type debugIndex struct {
	CLIVersion    string
	Address       string
	Region        string
	Started       time.Time
	Duration      string
	Interval      string
	NodeIDs       []string
	ServerIDs     []string
	Intervals     int
	NotCollected  map[string]string
	CollectedFrom string
}

func (c *OperatorDebugCommand) Run(args []string) int {
	fs := c.flagSetWith("operator debug", c.options())
	if _, code, ok := c.parseArgs(fs, args); !ok {
		return code
	}
	switch {
	case c.duration < 0:
		return c.fail("Invalid -duration %s: must not be negative", c.duration)
	case c.interval <= 0:
		return c.fail("Invalid -interval %s: must be positive", c.interval)
	case c.pprofDuration < time.Second && c.pprofDuration != 0:
		return c.fail("Invalid -pprof-duration %s: at least 1s, or 0 for no CPU profile", c.pprofDuration)
	case c.maxNodes < 0:
		return c.fail("Invalid -max-nodes %d: must not be negative", c.maxNodes)
	}
	client, ok := c.client()
	if !ok {
		return 1
	}
	now := time.Now
	if c.now != nil {
		now = c.now
	}
	started := now().UTC()
	name := "nomad-debug-" + started.Format("2006-01-02-150405Z")

	var dir string
	if c.output != "" {
		dir = filepath.Join(c.output, name)
	} else {
		tmp, err := os.MkdirTemp("", "nomad-debug-")
		if err != nil {
			return c.fail("Error creating a temporary directory: %v", err)
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return c.fail("Error creating %s: %v", dir, err)
	}

	dc := &debugCapture{client: client, dir: dir, verbose: c.verbose, ui: c.Ui.Output}
	dc.index = debugIndex{
		CLIVersion: Version, Address: client.Address(), Started: started,
		Duration: c.duration.String(), Interval: c.interval.String(), NotCollected: map[string]string{},
	}
	self, err := client.Agent().Self()
	if err != nil {
		os.RemoveAll(dir)
		return c.fail("Error querying the agent: %v", err)
	}
	if self.Member.Tags != nil {
		dc.index.Region = self.Member.Tags["region"]
	}
	dc.index.CollectedFrom = self.Member.Name

	c.Ui.Output("Starting debugger...")
	c.Ui.Output("")
	c.Ui.Output(formatKV([]string{
		"Nomad CLI Version|" + Version,
		"Region|" + orNone(dc.index.Region),
		"Agent|" + orNone(self.Member.Name),
		"Interval|" + c.interval.String(),
		"Duration|" + c.duration.String(),
	}))
	c.Ui.Output("")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	c.Ui.Output("Capturing cluster data...")
	dc.cluster()
	dc.servers(c.serverIDs, self)
	if c.nodeIDs != "" {
		dc.nodes(c.nodeIDs, c.maxNodes)
	}
	dc.agent(ctx, debugTarget{dir: "agent"}, c.logLevel, c.pprofDuration, c.duration)
	for _, name := range dc.index.ServerIDs {
		if name != self.Member.Name {
			dc.agent(ctx, debugTarget{dir: filepath.Join("server", name), serverID: name}, c.logLevel, c.pprofDuration, c.duration)
		}
	}
	for _, id := range dc.index.NodeIDs {
		dc.agent(ctx, debugTarget{dir: filepath.Join("client", id), nodeID: id}, c.logLevel, c.pprofDuration, c.duration)
	}
	dc.intervals(ctx, c.duration, c.interval, now)

	idx, _ := json.MarshalIndent(dc.index, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "index.json"), idx, 0o600); err != nil {
		return c.fail("Error writing the index: %v", err)
	}
	if c.output != "" {
		c.Ui.Output("Created debug directory: " + dir)
		return 0
	}
	archive := name + ".tar.gz"
	if err := writeTarGz(archive, filepath.Dir(dir), name); err != nil {
		os.Remove(archive)
		return c.fail("Error writing the debug archive: %v", err)
	}
	c.Ui.Output("Created debug archive: " + archive)
	return 0
}

// cluster captures what describes the whole cluster, once.
func (d *debugCapture) cluster() {
	for file, path := range map[string]string{
		"agent-self.json":         "/v1/agent/self",
		"members.json":            "/v1/agent/members",
		"regions.json":            "/v1/regions",
		"leader.json":             "/v1/status/leader",
		"namespaces.json":         "/v1/namespaces",
		"node-pools.json":         "/v1/node/pools",
		"raft-configuration.json": "/v1/operator/raft/configuration",
		"autopilot-health.json":   "/v1/operator/autopilot/health",
		"scheduler-config.json":   "/v1/operator/scheduler/configuration",
	} {
		d.capture(path, filepath.Join("cluster", file), nil)
	}
}

// servers records which servers the capture was asked about; their agents' data is asked
// through the addressed agent, which sends each request on with server_id.
func (d *debugCapture) servers(ids string, self *api.AgentSelf) {
	if ids == "" {
		return
	}
	members, err := d.client.Agent().Members()
	if err != nil {
		d.skip("server members", err)
		return
	}
	leader, _ := d.client.Status().Leader()
	for _, want := range strings.Split(ids, ",") {
		want = strings.TrimSpace(want)
		for _, m := range members.Members {
			addr := fmt.Sprintf("%s:%s", m.Addr, m.Tags["port"])
			match := want == "all" || want == m.Name || (want == "leader" && addr == leader)
			if !match || slices.Contains(d.index.ServerIDs, m.Name) {
				continue
			}
			d.index.ServerIDs = append(d.index.ServerIDs, m.Name)
		}
	}
}

// nodes reads the named nodes in full.
func (d *debugCapture) nodes(ids string, maxNodes int) {
	stubs, _, err := d.client.Nodes().List(nil)
	if err != nil {
		d.skip("/v1/nodes", err)
		return
	}
	for _, want := range strings.Split(ids, ",") {
		want = strings.TrimSpace(want)
		for _, n := range stubs {
			if want != "all" && !strings.HasPrefix(n.ID, want) {
				continue
			}
			if want == "all" && maxNodes > 0 && len(d.index.NodeIDs) >= maxNodes {
				break
			}
			d.index.NodeIDs = append(d.index.NodeIDs, n.ID)
			d.capture("/v1/node/"+n.ID, filepath.Join("client", n.ID, "node.json"), nil)
		}
	}
}

// debugTarget is the agent whose data is captured, and where in the archive: the addressed
// agent, a server by name (server_id) or a node's client (node_id).
type debugTarget struct {
	dir              string
	serverID, nodeID string
}

// params are the query parameters that send a request on to the target.
func (t debugTarget) params() map[string]string {
	switch {
	case t.serverID != "":
		return map[string]string{"server_id": t.serverID}
	case t.nodeID != "":
		return map[string]string{"node_id": t.nodeID}
	}
	return nil
}

// agent captures an agent's host data, profiles and, for the capture's duration, its log
// lines (in the background while the intervals run).
func (d *debugCapture) agent(ctx context.Context, t debugTarget, logLevel string, cpu, duration time.Duration) {
	d.capture("/v1/agent/host", filepath.Join(t.dir, "host.json"), &api.QueryOptions{Params: t.params()})
	lookup := func(name string, debug int) func() ([]byte, error) {
		return func() ([]byte, error) {
			return d.client.Agent().Lookup(name, api.PprofOptions{Debug: debug, ServerID: t.serverID, NodeID: t.nodeID}, nil)
		}
	}
	profiles := []struct {
		file string
		get  func() ([]byte, error)
	}{
		{"heap.prof", lookup("heap", 0)},
		{"goroutine.prof", lookup("goroutine", 0)},
		{"goroutine-debug1.txt", lookup("goroutine", 1)},
		{"goroutine-debug2.txt", lookup("goroutine", 2)},
	}
	if cpu > 0 {
		profiles = append(profiles, struct {
			file string
			get  func() ([]byte, error)
		}{"profile.prof", func() ([]byte, error) {
			return d.client.Agent().CPUProfile(api.PprofOptions{Seconds: int(cpu / time.Second), ServerID: t.serverID, NodeID: t.nodeID}, nil)
		}})
	}
	for _, p := range profiles {
		b, err := p.get()
		if err != nil {
			d.skip(filepath.Join(t.dir, "pprof", p.file), err)
			continue
		}
		d.write(filepath.Join(t.dir, "pprof", p.file), b)
	}
	if duration > 0 {
		d.logs(ctx, t, logLevel, duration)
	}
}

// logs starts following an agent's log for duration; the lines are written when it ends.
func (d *debugCapture) logs(ctx context.Context, t debugTarget, level string, duration time.Duration) {
	lctx, cancel := context.WithTimeout(ctx, duration)
	params := map[string]string{"log_level": level}
	for k, v := range t.params() {
		params[k] = v
	}
	frames, errs := d.client.Agent().Monitor(lctx.Done(), &api.QueryOptions{Params: params})
	file := filepath.Join(t.dir, "monitor.log")
	d.pending = append(d.pending, func() {
		defer cancel()
		var buf strings.Builder
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					d.write(file, []byte(buf.String()))
					return
				}
				if f != nil {
					buf.Write(f.Data)
				}
			case err := <-errs:
				if err != nil && lctx.Err() == nil {
					d.skip(file, err)
				}
				d.write(file, []byte(buf.String()))
				return
			case <-lctx.Done():
				d.write(file, []byte(buf.String()))
				return
			}
		}
	})
}

// intervals snapshots the cluster's state every interval until duration has passed (at
// least once), following the agent's log meanwhile.
func (d *debugCapture) intervals(ctx context.Context, duration, interval time.Duration, now func() time.Time) {
	// Each log follower ends by its own deadline (the capture's duration) or at an
	// interrupt; done closes once all have written their file.
	done := make(chan struct{})
	var followers sync.WaitGroup
	for _, follow := range d.pending {
		followers.Add(1)
		go func() {
			defer followers.Done()
			follow()
		}()
	}
	go func() {
		followers.Wait()
		close(done)
	}()
	start := now()
	all := &api.QueryOptions{Namespace: api.AllNamespacesNamespace}
	for i := 0; ; i++ {
		d.ui(fmt.Sprintf("    Capture interval %04d", i))
		sub := filepath.Join("interval", fmt.Sprintf("%04d", i))
		for file, path := range map[string]string{
			"jobs.json":        "/v1/jobs",
			"allocations.json": "/v1/allocations",
			"evaluations.json": "/v1/evaluations",
			"deployments.json": "/v1/deployments",
		} {
			d.capture(path, filepath.Join(sub, file), all)
		}
		d.capture("/v1/nodes", filepath.Join(sub, "nodes.json"), nil)
		d.capture("/v1/metrics", filepath.Join(sub, "metrics.json"), nil)
		d.index.Intervals = i + 1
		if now().Sub(start)+interval > duration {
			break
		}
		t := time.NewTimer(interval)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			d.ui("Interrupted: writing what was captured")
			<-done
			return
		}
	}
	<-done
}

// capture reads one API path and writes it as redacted, indented JSON.
func (d *debugCapture) capture(path, file string, q *api.QueryOptions) {
	var v any
	if _, err := d.client.Raw().Query(path, &v, q); err != nil {
		d.skip(path, err)
		return
	}
	b, err := json.MarshalIndent(redactSecrets(v), "", "  ")
	if err != nil {
		d.skip(path, err)
		return
	}
	d.write(file, b)
}

func (d *debugCapture) write(file string, b []byte) {
	p := filepath.Join(d.dir, file)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		d.skip(file, err)
		return
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		d.skip(file, err)
	}
}

func (d *debugCapture) skip(what string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.index.NotCollected[what] = err.Error()
	if d.verbose {
		d.ui(fmt.Sprintf("    Not collected: %s: %v", what, err))
	}
}

// redactSecrets replaces the values of keys that hold secrets (token secrets, keys,
// passwords) anywhere in a decoded JSON document.
func redactSecrets(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if isSecretKey(k) {
				if s, ok := val.(string); ok && s == "" {
					continue
				}
				x[k] = "[REDACTED]"
				continue
			}
			x[k] = redactSecrets(val)
		}
	case []any:
		for i := range x {
			x[i] = redactSecrets(x[i])
		}
	}
	return v
}

func isSecretKey(k string) bool {
	l := strings.ToLower(strings.ReplaceAll(k, "_", ""))
	switch {
	case l == "secretid", l == "encrypt", l == "key", l == "password", l == "token",
		l == "signedidentities": // workload identity JWTs, each a credential
		return true
	case strings.HasSuffix(l, "token") && !strings.HasSuffix(l, "ttl"),
		strings.HasSuffix(l, "secret"), strings.HasSuffix(l, "password"),
		strings.HasSuffix(l, "privatekey"), strings.HasSuffix(l, "keypem"):
		return true
	}
	return false
}

// writeTarGz archives root/name (a directory) into file.
func writeTarGz(file, root, name string) (err error) {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	err = filepath.WalkDir(filepath.Join(root, name), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if e.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	return errors.Join(err, tw.Close(), gz.Close())
}
