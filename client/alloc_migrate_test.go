package client

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestMigrateDisk_AcrossNodes: a replacement on another node whose group migrates its
// ephemeral disk starts with the previous allocation's alloc/data and local/ (modes kept,
// links left out), taken in chunks once the previous allocation's tasks have stopped.
func TestMigrateDisk_AcrossNodes(t *testing.T) {
	c1, s1 := testClient(t)
	c2, s2 := testClient(t)
	mk := func(id string) *structs.Allocation {
		a := testAlloc(id, structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
		a.Job.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{Migrate: new(true), SizeMB: new(10)}
		return a
	}
	a1 := mk("a1")
	s1.setAllocs(a1)
	waitFor(t, "a1 running", reportedStatus(s1, "a1", structs.AllocClientStatusRunning))
	dir1 := filepath.Join(c1.config.AllocDir, "a1")
	must.NoError(t, os.MkdirAll(filepath.Join(dir1, "alloc", "data", "db"), 0o750))
	must.NoError(t, os.WriteFile(filepath.Join(dir1, "alloc", "data", "db", "state"), []byte("kept across nodes"), 0o600))
	must.NoError(t, os.WriteFile(filepath.Join(dir1, "t", "local", "cache"), []byte("local"), 0o644))
	must.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir1, "alloc", "data", "link")))

	// The servers' relay, in chunks far smaller than the snapshot, so that ranges join up.
	const chunk = 64
	var conflicts int
	s2.migrate = func(args *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error {
		must.Eq(t, "a1", args.AllocID)
		must.Eq(t, c2.node.ID, args.NodeID)
		var buf bytes.Buffer
		if err := c1.WriteAllocSnapshot(args.AllocID, args.Offset, chunk+1, 10<<20, &buf); err != nil {
			if structs.ErrorCode(err) == 409 {
				conflicts++
			}
			return err
		}
		reply.EOF = buf.Len() <= chunk
		reply.Data = buf.Bytes()[:min(buf.Len(), chunk)]
		return nil
	}

	a2 := mk("a2")
	a2.PreviousAllocation = "a1"
	s2.setAllocs(a2)
	stopped := *a1
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s1.setAllocs(&stopped)
	waitFor(t, "a2 running", reportedStatus(s2, "a2", structs.AllocClientStatusRunning))

	dir2 := filepath.Join(c2.config.AllocDir, "a2")
	got, err := os.ReadFile(filepath.Join(dir2, "alloc", "data", "db", "state"))
	must.NoError(t, err)
	must.Eq(t, "kept across nodes", string(got))
	fi, err := os.Stat(filepath.Join(dir2, "alloc", "data", "db", "state"))
	must.NoError(t, err)
	must.Eq(t, os.FileMode(0o600), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(dir2, "alloc", "data", "db"))
	must.NoError(t, err)
	must.Eq(t, os.FileMode(0o750), fi.Mode().Perm())
	got, err = os.ReadFile(filepath.Join(dir2, "t", "local", "cache"))
	must.NoError(t, err)
	must.Eq(t, "local", string(got))
	_, err = os.Lstat(filepath.Join(dir2, "alloc", "data", "link"))
	must.True(t, os.IsNotExist(err), must.Sprint("a link is not carried over"))
	_, err = os.ReadFile(filepath.Join(dir1, "alloc", "data", "db", "state"))
	must.NoError(t, err, must.Sprint("across nodes the data is copied; the previous node keeps its own"))
	kept, err := filepath.Glob(filepath.Join(c1.config.AllocDir, ".snapshot-*"))
	must.NoError(t, err)
	must.SliceEmpty(t, kept, must.Sprint("the snapshot file goes once its last range was served"))
	left, err := filepath.Glob(filepath.Join(c2.config.AllocDir, ".a2.migrate-*"))
	must.NoError(t, err)
	must.SliceEmpty(t, left)
}

// TestWriteAllocSnapshot_RefusesRunningAndUnknown: a snapshot is only taken of an
// allocation whose tasks have stopped, and of one this node has.
func TestWriteAllocSnapshot_RefusesRunningAndUnknown(t *testing.T) {
	c, s := testClient(t)
	a := testAlloc("a1", structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
	s.setAllocs(a)
	waitFor(t, "a1 running", reportedStatus(s, "a1", structs.AllocClientStatusRunning))
	var buf bytes.Buffer
	err := c.WriteAllocSnapshot("a1", 0, 1<<20, 1<<20, &buf)
	must.Eq(t, 409, structs.ErrorCode(err))
	err = c.WriteAllocSnapshot("nope", 0, 1<<20, 1<<20, &buf)
	must.Eq(t, 404, structs.ErrorCode(err))
	err = c.WriteAllocSnapshot("../a1", 0, 1<<20, 1<<20, &buf)
	must.Eq(t, 400, structs.ErrorCode(err))

	// Stopped, with more data than its disk: refused, not truncated.
	must.NoError(t, os.WriteFile(filepath.Join(c.config.AllocDir, "a1", "alloc", "data", "big"), make([]byte, 2<<10), 0o644))
	stopped := *a
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped)
	waitFor(t, "a1 stopped", reportedStatus(s, "a1", structs.AllocClientStatusComplete))
	waitFor(t, "a1's runner done", func() bool {
		c.mu.Lock()
		r := c.runners["a1"]
		c.mu.Unlock()
		return r == nil || r.isDone()
	})
	err = c.WriteAllocSnapshot("a1", 0, 1<<20, 1<<10, &buf)
	must.Eq(t, 413, structs.ErrorCode(err))
	must.NoError(t, c.WriteAllocSnapshot("a1", 0, 1<<20, 1<<20, &buf))
	must.Positive(t, buf.Len())
}

func snapshotOf(t *testing.T, entries ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range entries {
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = 1
		}
		must.NoError(t, tw.WriteHeader(h))
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
			must.NoError(t, err)
		}
	}
	must.NoError(t, tw.Close())
	must.NoError(t, gz.Close())
	return buf.Bytes()
}

// TestRestoreSnapshot_ConfinesEntries: a snapshot from another node cannot write outside
// alloc/data and its group's tasks' local/, nor past the ephemeral disk's size, nor through
// a link.
func TestRestoreSnapshot_ConfinesEntries(t *testing.T) {
	reg := func(name string) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644}
	}
	cases := map[string][]*tar.Header{
		"parent":          {reg("../escape")},
		"dot dot inside":  {reg("alloc/data/../../escape")},
		"absolute":        {reg("/tmp/escape")},
		"logs":            {reg("alloc/logs/t.stdout.0")},
		"secrets":         {reg("t/secrets/token")},
		"another task":    {reg("other/local/x")},
		"allocation root": {reg("x")},
		"too large":       {{Name: "alloc/data/big", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2 << 10}},
		"through a link":  {{Name: "alloc/data/l", Typeflag: tar.TypeSymlink, Linkname: "/tmp"}, reg("alloc/data/l/x")},
		"replaces a file": {reg("alloc/data/f"), reg("alloc/data/f")},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			outside := t.TempDir()
			must.NoError(t, os.Symlink(outside, filepath.Join(dir, "sneaky")))
			root, err := os.OpenRoot(dir)
			must.NoError(t, err)
			defer root.Close()
			err = restoreSnapshot(root, bytes.NewReader(snapshotOf(t, entries...)), []string{"t"}, 1<<10)
			if name == "through a link" {
				// The link entry is dropped; the file then lands in a real directory.
				must.NoError(t, err)
				fi, err := os.Lstat(filepath.Join(dir, "alloc", "data", "l"))
				must.NoError(t, err)
				must.True(t, fi.IsDir())
				return
			}
			must.Error(t, err)
			left, _ := os.ReadDir(outside)
			must.SliceEmpty(t, left)
		})
	}
	t.Run("a task's link in place of local", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		must.NoError(t, os.MkdirAll(filepath.Join(dir, "t"), 0o755))
		must.NoError(t, os.Symlink(outside, filepath.Join(dir, "t", "local")))
		root, err := os.OpenRoot(dir)
		must.NoError(t, err)
		defer root.Close()
		err = restoreSnapshot(root, bytes.NewReader(snapshotOf(t, reg("t/local/x"))), []string{"t"}, 1<<10)
		must.Error(t, err)
		left, _ := os.ReadDir(outside)
		must.SliceEmpty(t, left)
	})
}

// TestMigrateDisk_FailedMigrationKeepsNothing: a snapshot that fails half-way leaves none of
// what it unpacked; the tasks start with an empty disk.
func TestMigrateDisk_FailedMigrationKeepsNothing(t *testing.T) {
	c, s := testClient(t)
	bad := snapshotOf(t,
		&tar.Header{Name: "alloc/data/good", Typeflag: tar.TypeReg, Mode: 0o644},
		&tar.Header{Name: "t/local/good", Typeflag: tar.TypeReg, Mode: 0o644},
		&tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644})
	s.migrate = func(args *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error {
		reply.Data, reply.EOF = bad, true
		return nil
	}
	a := testAlloc("a2", structs.JobTypeService, mockTask("t", map[string]any{"run_for": "1h"}))
	a.Job.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{Migrate: new(true)}
	a.PreviousAllocation = "elsewhere"
	s.setAllocs(a)
	waitFor(t, "a2 running", reportedStatus(s, "a2", structs.AllocClientStatusRunning))
	dir := filepath.Join(c.config.AllocDir, "a2")
	for _, p := range []string{"alloc/data/good", "t/local/good", ".migrating"} {
		_, err := os.Lstat(filepath.Join(dir, p))
		must.True(t, os.IsNotExist(err), must.Sprintf("%s left behind", p))
	}
	_, err := os.Lstat(filepath.Join(c.config.AllocDir, "escape"))
	must.True(t, os.IsNotExist(err))
}

// TestMigrationLeftoversRemovedAtStart: snapshot and download files a crashed agent left in
// the allocation root are removed by the next start; allocation directories are not.
func TestMigrationLeftoversRemovedAtStart(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{".snapshot-123", ".a1.migrate-456"} {
		must.NoError(t, os.WriteFile(filepath.Join(root, name), []byte("x"), 0o600))
	}
	must.NoError(t, os.MkdirAll(filepath.Join(root, "a1", "alloc", "data"), 0o755))
	c, err := New(&Config{Name: "test", AllocDir: root, Drivers: nil, MaxQueryTime: time.Second, RetryInterval: 20 * time.Millisecond}, newFakeServers())
	must.NoError(t, err)
	t.Cleanup(c.Shutdown)
	entries, err := os.ReadDir(root)
	must.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	must.SliceContains(t, names, "a1")
	must.SliceNotContains(t, names, ".snapshot-123")
	must.SliceNotContains(t, names, ".a1.migrate-456")
}
