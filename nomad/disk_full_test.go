package nomad

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
	"golang.org/x/sys/unix"
)

const diskTestSegmentSize = 1 << 20

// mountTmpfs mounts a tmpfs of size on a fresh directory for the test, so a disk can be filled
// without touching the host's. It needs root.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs to fill needs root")
	}
	dir := t.TempDir()
	must.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size))
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// fillDisk allocates one file that leaves about leave bytes free on dir's filesystem.
func fillDisk(t *testing.T, dir string, leave uint64) string {
	t.Helper()
	sp, err := statfsSpace(dir)
	must.NoError(t, err)
	must.Greater(t, leave, sp.FreeBytes)
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	must.NoError(t, err)
	defer f.Close()
	must.NoError(t, unix.Fallocate(int(f.Fd()), 0, 0, int64(sp.FreeBytes-leave)))
	return path
}

func diskServer(t *testing.T, dir string) *Server {
	t.Helper()
	return testServer(t, func(c *Config) { c.DataDir = dir; c.RaftSegmentSize = diskTestSegmentSize })
}

func applyJob(srv *Server, id string) error {
	_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID(id)})
	return err
}

func mustHaveJobs(t *testing.T, srv *Server, ids []string) {
	t.Helper()
	for _, id := range ids {
		waitForJob(t, srv, id)
	}
}

// Issue 29: a full disk is refused as such (507 naming the path), the leader keeps leading,
// writes resume once space is back without a restart, and a restart has everything.
func TestDiskFull_WritesRefusedNamingTheDiskThenResumeWithoutRestart(t *testing.T) {
	mnt := mountTmpfs(t, "48m")
	srv := diskServer(t, mnt)
	var acked []string
	for i := range 10 {
		id := fmt.Sprintf("before-%d", i)
		must.NoError(t, applyJob(srv, id))
		acked = append(acked, id)
	}

	filler := fillDisk(t, mnt, 0)
	err := applyJob(srv, "refused")
	must.ErrorIs(t, err, structs.ErrDiskFull)
	must.Eq(t, http.StatusInsufficientStorage, structs.ErrorCode(err))
	must.StrContains(t, err.Error(), "no space left on device")
	must.StrContains(t, err.Error(), mnt)
	must.True(t, srv.IsLeader(), must.Sprint("a refused write must not cost the leadership"))
	sp, ok := srv.DiskSpace()
	must.True(t, ok)
	must.NotEq(t, "", sp.Warning())

	must.NoError(t, os.Remove(filler))
	for i := range 10 {
		id := fmt.Sprintf("after-%d", i)
		must.NoError(t, applyJob(srv, id))
		acked = append(acked, id)
	}
	must.NoError(t, srv.Shutdown())

	srv = diskServer(t, mnt)
	mustHaveJobs(t, srv, acked)
	got, err := srv.State().JobByID(nil, "default", "refused")
	must.NoError(t, err)
	must.Nil(t, got)
}

// When the disk fills past the guard (another process filling it between two checks), raft-wal
// fails its segment rotation, leaves a 0-byte segment file and refuses every later append.
// The log store reopens it once space is back: the single server leads again and takes
// writes without a restart, and the next start cleans the leftover file up instead of
// calling it damage.
func TestDiskFull_FailedSegmentRotationRecoversWithoutRestart(t *testing.T) {
	mnt := mountTmpfs(t, "48m")
	srv := diskServer(t, mnt)
	srv.disk.mu.Lock()
	srv.disk.logFloor, srv.disk.writeFloor = 1, 1 // let writes reach raft-wal on a full disk
	srv.disk.mu.Unlock()

	var acked []string
	filler := fillDisk(t, mnt, diskTestSegmentSize/2)
	var failed error
	for i := 0; i < 2000 && failed == nil; i++ {
		id := fmt.Sprintf("job-%d", i)
		if failed = applyJob(srv, id); failed == nil {
			acked = append(acked, id)
		}
	}
	must.Error(t, failed, must.Sprint("the log never needed a new segment"))
	must.SliceNotEmpty(t, acked)

	must.NoError(t, os.Remove(filler))
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		return applyJob(srv, "after-space-returned")
	}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
	acked = append(acked, "after-space-returned")
	// The reopened log shares the metadata DB with the one it replaced, which was closed:
	// the stable store and the next segment rotation must still reach that DB.
	must.NoError(t, srv.logStore.SetUint64([]byte("reopen-check"), 7))
	segments := func() int {
		files, err := filepath.Glob(filepath.Join(raftutil.WALDir(mnt), "*.wal"))
		must.NoError(t, err)
		return len(files)
	}
	before := segments()
	for i := 0; segments() == before; i++ {
		must.Less(t, 5000, i, must.Sprint("the log never rotated after the reopen"))
		id := fmt.Sprintf("rotate-%d", i)
		must.NoError(t, applyJob(srv, id))
		acked = append(acked, id)
	}
	mustHaveJobs(t, srv, acked)
	must.NoError(t, srv.Shutdown())

	srv = diskServer(t, mnt)
	mustHaveJobs(t, srv, acked)
	v, err := srv.logStore.GetUint64([]byte("reopen-check"))
	must.NoError(t, err)
	must.Eq(t, uint64(7), v)
}

// The next start after a full disk: a 0-byte tail segment past the applied index is the
// failed allocation, removed and created again; the same file holding applied entries is
// still damage (covered by TestSecurity_LogEndingBeforeAppliedIndexRefusesToStart).
func TestDiskFull_UnallocatedTailSegmentIsNotDamage(t *testing.T) {
	mnt := mountTmpfs(t, "48m")
	srv := diskServer(t, mnt)
	srv.disk.mu.Lock()
	srv.disk.logFloor, srv.disk.writeFloor = 1, 1
	srv.disk.mu.Unlock()
	filler := fillDisk(t, mnt, diskTestSegmentSize/2)
	var acked []string
	for i := 0; i < 2000; i++ {
		id := fmt.Sprintf("job-%d", i)
		if applyJob(srv, id) != nil {
			break
		}
		acked = append(acked, id)
	}
	must.NoError(t, srv.Shutdown())
	files := segmentFiles(t, mnt)
	fi, err := os.Stat(files[len(files)-1])
	must.NoError(t, err)
	must.Eq(t, int64(0), fi.Size(), must.Sprint("the failed rotation should leave an empty segment file"))

	// Still full: the start is refused for want of space, not as damage.
	cfg := DefaultConfig()
	cfg.FastRaft, cfg.NumSchedulers, cfg.DataDir, cfg.RaftSegmentSize = true, 0, mnt, diskTestSegmentSize
	cfg.Logger = hclog.NewNullLogger()
	_, err = NewServer(cfg)
	must.ErrorIs(t, err, unix.ENOSPC)
	must.StrContains(t, err.Error(), "no space left on device")
	must.StrContains(t, err.Error(), mnt)
	must.StrNotContains(t, err.Error(), "damaged", must.Sprint("a full disk is not damage; the repair steps are the wrong advice"))
	var coded *structs.CodedError
	must.False(t, errors.As(err, &coded))

	must.NoError(t, os.Remove(filler))
	srv = diskServer(t, mnt)
	mustHaveJobs(t, srv, acked)
	must.NoError(t, applyJob(srv, "after"))
}

// The warning starts below 256 MiB or 5% free, whichever is larger, so a small disk warns at
// 256 MiB and a large one before its last 5% goes.
func TestDiskFull_WarningThreshold(t *testing.T) {
	const mib, gib = uint64(1 << 20), uint64(1 << 30)
	for _, tc := range []struct {
		free, total uint64
		warn        bool
	}{
		{free: 300 * mib, total: gib, warn: false},
		{free: 255 * mib, total: gib, warn: true},
		{free: 256 * mib, total: gib, warn: false},
		{free: 40 * gib, total: 1000 * gib, warn: true},
		{free: 60 * gib, total: 1000 * gib, warn: false},
		{free: 0, total: 0, warn: true},
	} {
		got := DiskSpace{Path: "/data/server/raft/wal", FreeBytes: tc.free, TotalBytes: tc.total}.Warning()
		must.Eq(t, tc.warn, got != "", must.Sprintf("free %d of %d: %q", tc.free, tc.total, got))
		if tc.warn {
			must.StrContains(t, got, "/data/server/raft/wal")
		}
	}
}

// A snapshot that fails for lack of space leaves the previous one whole and no half-written
// directory, and the next attempt once space is back succeeds.
func TestDiskFull_FailedSnapshotKeepsThePreviousOne(t *testing.T) {
	mnt := mountTmpfs(t, "48m")
	srv := diskServer(t, mnt)
	must.NoError(t, applyJob(srv, "first"))
	must.NoError(t, srv.raft.Snapshot().Error())
	snapDir := filepath.Join(raftutil.RaftDir(mnt), "snapshots")
	before, err := os.ReadDir(snapDir)
	must.NoError(t, err)
	must.SliceLen(t, 1, before)
	must.NoError(t, applyJob(srv, "second"))

	filler := fillDisk(t, mnt, 0)
	must.Error(t, srv.raft.Snapshot().Error())
	after, err := os.ReadDir(snapDir)
	must.NoError(t, err)
	must.SliceLen(t, 1, after, must.Sprint("a failed snapshot left a directory behind"))
	must.Eq(t, before[0].Name(), after[0].Name())
	fss, err := raft.NewFileSnapshotStoreWithLogger(raftutil.RaftDir(mnt), 2, hclog.NewNullLogger())
	must.NoError(t, err)
	must.NoError(t, raftutil.CheckNewestSnapshot(fss, raftutil.RaftDir(mnt)))

	must.NoError(t, os.Remove(filler))
	must.NoError(t, srv.raft.Snapshot().Error())
	must.NoError(t, srv.Shutdown())
	srv = diskServer(t, mnt)
	mustHaveJobs(t, srv, []string{"first", "second"})
}
