package raftutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// These tests drive three in-process raft nodes on raft-wal (the servers' log store, a
// MonotonicLogStore) into a follower installing a leader's snapshot whose index is below the
// follower's own last log entry (hashicorp/raft issue #697). raft v1.8.0 empties a monotonic
// store on install but keeps its in-memory last log index, so the follower either refuses every
// append after the install (the leader resends the snapshot for ever) or, once a leader probes it
// at that stale index, accepts appends over the hole and panics "log not found" applying them.
// They live here, beside the rest of what touches the raft-wal directory, rather than in ./nomad,
// so they run in seconds without a server.
//
// A panic in raft's own goroutines kills the test binary, so each scenario runs in a child
// process (this binary again, with installSnapshotChildEnv naming the scenario) and the parent
// turns a crash into a failure that quotes it.

const installSnapshotChildEnv = "NOMAD_TEST_RAFT_INSTALL_SNAPSHOT_CHILD"

func TestInstallSnapshot_OlderThanFollowerLog(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		// The follower's log agrees with the leader's but it could not store appends (a full
		// disk), so the leader walked back past its compacted log and sent its snapshot; a new
		// leader then probes the follower at its old last index, which matches.
		{name: "consistent log, refused appends, new leader", run: scenarioRefusedAppendsNewLeader},
		// The follower led an earlier term and holds entries nobody else stored, past the
		// index of the snapshot the next leader sends it.
		{name: "uncommitted suffix from an older term", run: scenarioUncommittedSuffix},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if os.Getenv(installSnapshotChildEnv) == tc.name {
				tc.run(t)
				return
			}
			if os.Getenv(installSnapshotChildEnv) != "" {
				t.Skip("another scenario's child process")
			}
			runInstallSnapshotChild(t, tc.name)
		})
	}
}

// runInstallSnapshotChild runs one scenario in a child process and fails, quoting the child's
// verdict (its assertion or the panic) and the last lines raft logged, when the child fails.
func runInstallSnapshotChild(t *testing.T, name string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInstallSnapshot_OlderThanFollowerLog$", "-test.v", "-test.timeout=90s")
	cmd.Env = append(os.Environ(), installSnapshotChildEnv+"="+name)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err == nil {
		return
	}
	text := out.String()
	if i := strings.Index(text, "panic: "); i >= 0 {
		t.Fatalf("the follower crashed:\n%s", text[i:min(len(text), i+1500)])
	}
	// Raft's log lines carry a level; the rest is the test's own verdict.
	var verdict, raftLog []string
	for line := range strings.Lines(text) {
		if strings.Contains(line, "Z [") {
			raftLog = append(raftLog, line)
		} else {
			verdict = append(verdict, line)
		}
	}
	raftLog = raftLog[max(0, len(raftLog)-30):]
	t.Fatalf("child failed (%v):\n%s--- raft's last lines:\n%s", err, strings.Join(verdict, ""), strings.Join(raftLog, ""))
}

// scenarioRefusedAppendsNewLeader: B leads, A follows with a log that agrees with B's up to L;
// B and C snapshot at S < L and compact; A's store refuses appends, so each refusal moves the
// leader's next index for A back one, until the leader no longer has the entry before it and
// sends its snapshot at S. A's disk is freed and leadership moves to the other voter, whose
// probe finds A's old last entry (L, same term). A is a non-voter only so that it cannot be
// elected and spoil the arrangement: a follower installs a snapshot the same way either way.
func scenarioRefusedAppendsNewLeader(t *testing.T) {
	c := newInstallCluster(t, 3)
	a, b, cc := c.nodes[0], c.nodes[1], c.nodes[2]
	c.bootstrap(t, b, a)
	c.waitLeader(t, b)

	c.apply(t, a, "one", "two", "three")
	c.waitConverged(t)
	snapIndex := c.snapshot(t, b, cc)

	c.apply(t, a, "four", "five")
	c.waitConverged(t)
	followerLast := a.raft.LastIndex()
	must.Greater(t, snapIndex, followerLast)

	a.store.refuse.Store(true)
	c.apply(t, a, "six", "seven")
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return a.fsm.restoreCount() > 0 }),
		wait.Timeout(20*time.Second), wait.Gap(10*time.Millisecond)),
		must.Sprint("the leader never sent A its snapshot"))
	a.store.refuse.Store(false)
	t.Logf("A installed the snapshot at %d with its log at %d", snapIndex, followerLast)

	leader := c.waitOtherLeader(t, a)
	next := b
	if leader == b {
		next = cc
	}
	must.NoError(t, leader.raft.LeadershipTransferToServer(next.id, next.addr).Error())
	c.apply(t, a, "eight", "nine")
	c.waitConverged(t)
}

// scenarioUncommittedSuffix: A leads term 2, is cut off, and appends five entries nobody else
// stores. B and C elect a leader, commit two entries (fewer than A's five), snapshot and compact.
// When A is back, the leader's snapshot is below A's last index.
func scenarioUncommittedSuffix(t *testing.T) {
	c := newInstallCluster(t, 3)
	a, b, cc := c.nodes[0], c.nodes[1], c.nodes[2]
	c.bootstrap(t, a)
	c.waitLeader(t, a)
	must.NoError(t, a.raft.Apply([]byte("one"), 5*time.Second).Error())
	c.waitConverged(t)

	c.isolate(a)
	base := a.raft.LastIndex()
	for i := range 5 {
		_ = a.raft.Apply(fmt.Appendf(nil, "lost-%d", i), 0) // never committed: its future fails
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return a.raft.LastIndex() == base+5 }),
		wait.Timeout(10*time.Second), wait.Gap(5*time.Millisecond)),
		must.Sprint("A did not store its uncommitted entries"))

	c.apply(t, a, "two", "three")
	snapIndex := c.snapshot(t, b, cc)
	must.Greater(t, snapIndex, base+5)
	t.Logf("B and C snapshot at %d, A's log ends at %d", snapIndex, base+5)

	c.heal(a)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return a.fsm.restoreCount() > 0 }),
		wait.Timeout(20*time.Second), wait.Gap(10*time.Millisecond)),
		must.Sprint("the leader never sent A its snapshot"))
	c.apply(t, a, "four")
	c.waitConverged(t)
}

// installCluster is three raft nodes on an in-memory network, each with raft-wal and a file
// snapshot store in its own temporary directory.
type installCluster struct {
	nodes []*installNode
}

type installNode struct {
	id    raft.ServerID
	addr  raft.ServerAddress
	trans *raft.InmemTransport
	store *refusingWAL
	fsm   *listFSM
	raft  *raft.Raft
}

// refusingWAL is raft-wal that refuses appends while refuse is set, as the servers' log store
// does when the disk cannot take the next segment. Embedding keeps raft-wal's IsMonotonic.
type refusingWAL struct {
	*wal.WAL
	refuse atomic.Bool
}

var errRefused = errors.New("test: log store refusing appends (a full disk)")

func (w *refusingWAL) StoreLog(l *raft.Log) error { return w.StoreLogs([]*raft.Log{l}) }

func (w *refusingWAL) StoreLogs(logs []*raft.Log) error {
	if w.refuse.Load() {
		return errRefused
	}
	return w.WAL.StoreLogs(logs)
}

func newInstallCluster(t *testing.T, n int) *installCluster {
	c := &installCluster{}
	for i := range n {
		dir := t.TempDir()
		must.NoError(t, os.Mkdir(filepath.Join(dir, "wal"), 0o700))
		meta := &metadb.BoltMetaDB{}
		w, err := wal.Open(filepath.Join(dir, "wal"), wal.WithMetaStore(meta))
		must.NoError(t, err)
		snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hclog.NewNullLogger())
		must.NoError(t, err)
		addr, trans := raft.NewInmemTransport("")
		node := &installNode{id: raft.ServerID(fmt.Sprintf("node%d", i)), addr: addr, trans: trans,
			store: &refusingWAL{WAL: w}, fsm: &listFSM{}}

		conf := raft.DefaultConfig()
		conf.LocalID = node.id
		conf.HeartbeatTimeout = 50 * time.Millisecond
		conf.ElectionTimeout = 50 * time.Millisecond
		conf.LeaderLeaseTimeout = 50 * time.Millisecond
		conf.CommitTimeout = 5 * time.Millisecond
		// Snapshots only when a scenario asks, and compaction keeps nothing behind them, so
		// a leader must send its snapshot to a follower that needs an entry at or below it.
		conf.SnapshotThreshold = 1 << 40
		conf.SnapshotInterval = time.Hour
		conf.TrailingLogs = 0
		conf.Logger = hclog.New(&hclog.LoggerOptions{Name: string(node.id), Level: hclog.Info, Output: testLogWriter{t}})
		r, err := raft.NewRaft(conf, node.fsm, node.store, node.store, snaps, trans)
		must.NoError(t, err)
		node.raft = r
		t.Cleanup(func() {
			_ = r.Shutdown().Error()
			_ = w.Close()
			_ = meta.Close()
		})
		c.nodes = append(c.nodes, node)
	}
	for _, x := range c.nodes {
		for _, y := range c.nodes {
			if x != y {
				x.trans.Connect(y.addr, y.trans)
			}
		}
	}
	return c
}

// bootstrap gives only first the configuration, so it is the one that can be elected: the
// others have no peers to ask for votes until a leader contacts them. nonvoters join without
// a vote.
func (c *installCluster) bootstrap(t *testing.T, first *installNode, nonvoters ...*installNode) {
	var conf raft.Configuration
	for _, n := range c.nodes {
		suffrage := raft.Voter
		if slices.Contains(nonvoters, n) {
			suffrage = raft.Nonvoter
		}
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: suffrage, ID: n.id, Address: n.addr})
	}
	must.NoError(t, first.raft.BootstrapCluster(conf).Error())
}

func (c *installCluster) waitLeader(t *testing.T, n *installNode) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return n.raft.State() == raft.Leader }),
		wait.Timeout(10*time.Second), wait.Gap(5*time.Millisecond)),
		must.Sprintf("%s did not become leader", n.id))
}

// waitOtherLeader waits for a leader among the nodes other than not.
func (c *installCluster) waitOtherLeader(t *testing.T, not *installNode) *installNode {
	t.Helper()
	var leader *installNode
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		for _, n := range c.nodes {
			if n != not && n.raft.State() == raft.Leader {
				leader = n
				return true
			}
		}
		return false
	}), wait.Timeout(10*time.Second), wait.Gap(5*time.Millisecond)), must.Sprint("no new leader"))
	return leader
}

// apply commits values through whichever node other than not leads. Timeouts are short, so a
// loaded machine may see an election at any point: a write that lost its leader is tried again
// (should it have been applied too, every node applies it twice alike).
func (c *installCluster) apply(t *testing.T, not *installNode, values ...string) {
	t.Helper()
	for _, v := range values {
		var err error
		for range 10 {
			if err = c.waitOtherLeader(t, not).raft.Apply([]byte(v), 5*time.Second).Error(); err == nil {
				break
			}
		}
		must.NoError(t, err)
	}
}

// snapshot waits until nodes have applied all they hold, the same on each, and has each take a
// snapshot, which compaction (TrailingLogs 0) makes their whole log: raft-wal serves no entry at
// or below it any more, so whichever of them leads must send a follower needing one its snapshot.
// It returns the lowest of their snapshots' indexes.
func (c *installCluster) snapshot(t *testing.T, nodes ...*installNode) uint64 {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		for _, n := range nodes {
			if n.raft.AppliedIndex() != n.raft.LastIndex() || n.raft.LastIndex() != nodes[0].raft.LastIndex() {
				return false
			}
		}
		return true
	}), wait.Timeout(10*time.Second), wait.Gap(5*time.Millisecond)), must.Sprint("nodes did not catch up before the snapshot"))
	var index uint64
	for i, n := range nodes {
		f := n.raft.Snapshot()
		must.NoError(t, f.Error())
		meta, rc, err := f.Open()
		must.NoError(t, err)
		_ = rc.Close()
		if i == 0 || meta.Index < index {
			index = meta.Index
		}
	}
	return index
}

// isolate cuts n off from the others in both directions; heal joins it again.
func (c *installCluster) isolate(n *installNode) {
	n.trans.DisconnectAll()
	for _, o := range c.nodes {
		if o != n {
			o.trans.Disconnect(n.addr)
		}
	}
}

func (c *installCluster) heal(n *installNode) {
	for _, o := range c.nodes {
		if o != n {
			o.trans.Connect(n.addr, n.trans)
			n.trans.Connect(o.addr, o.trans)
		}
	}
}

// waitConverged waits until every node has applied the same entries as the others.
func (c *installCluster) waitConverged(t *testing.T) {
	t.Helper()
	agree := func() bool {
		want := c.nodes[0].fsm.snapshot()
		for _, n := range c.nodes[1:] {
			if !slices.Equal(n.fsm.snapshot(), want) {
				return false
			}
		}
		return true
	}
	err := wait.InitialSuccess(wait.BoolFunc(agree), wait.Timeout(15*time.Second), wait.Gap(10*time.Millisecond)).Run()
	if err != nil {
		var states []string
		for _, n := range c.nodes {
			states = append(states, fmt.Sprintf("%s applied %v (restored %d snapshots)", n.id, n.fsm.snapshot(), n.fsm.restoreCount()))
		}
		t.Fatalf("the nodes' state machines never agreed: %v", states)
	}
}

// listFSM keeps every applied entry's data in order; its snapshot is the whole list.
type listFSM struct {
	mu       sync.Mutex
	entries  []string
	restores int
}

func (f *listFSM) Apply(l *raft.Log) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = append(f.entries, string(l.Data))
	return nil
}

func (f *listFSM) snapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.entries)
}

func (f *listFSM) restoreCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.restores
}

func (f *listFSM) Snapshot() (raft.FSMSnapshot, error) { return listSnapshot(f.snapshot()), nil }

func (f *listFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	var entries []string
	if err := json.NewDecoder(rc).Decode(&entries); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = entries
	f.restores++
	return nil
}

type listSnapshot []string

func (s listSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode([]string(s)); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

func (listSnapshot) Release() {}

// testLogWriter sends raft's log lines to the test's log, so a failing child shows them.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
