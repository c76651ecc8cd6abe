package nomad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

const testRaftSegmentSize = 16 * 1024

// segmentedDataDir runs a server with small log segments, registers jobs until several
// segments are sealed and the newest holds applied entries, and stops it. It returns the dir,
// the newest segment file and the last index the server applied.
func segmentedDataDir(t *testing.T) (string, string, uint64) {
	t.Helper()
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir; c.RaftSegmentSize = testRaftSegmentSize })
	var last uint64
	for i := 0; ; i++ {
		idx, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID(fmt.Sprintf("job-%d", i))})
		must.NoError(t, err)
		last = idx
		files := segmentFiles(t, dir)
		if len(files) >= 3 && newestBase(t, files) < last-2 {
			break
		}
		must.Less(t, 500, i, must.Sprint("the log never rolled to a third segment"))
	}
	must.NoError(t, srv.Shutdown())
	applied, err := raftutil.ReadApplied(raftutil.AppliedFile(dir))
	must.NoError(t, err)
	must.GreaterEq(t, last, applied, must.Sprint("the record must reach the last acknowledged write"))
	files := segmentFiles(t, dir)
	return dir, files[len(files)-1], applied
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(raftutil.WALDir(dir), "*.wal"))
	must.NoError(t, err)
	sort.Strings(files) // names start with the zero-padded base index
	return files
}

// newestBase is the base index in the newest segment's name.
func newestBase(t *testing.T, files []string) uint64 {
	t.Helper()
	var base, id uint64
	_, err := fmt.Sscanf(filepath.Base(files[len(files)-1]), "%020d-%016x.wal", &base, &id)
	must.NoError(t, err)
	return base
}

func restartSegmented(t *testing.T, dir string) (*Server, error) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.NumSchedulers = 0
	cfg.DataDir = dir
	cfg.RaftSegmentSize = testRaftSegmentSize
	cfg.Logger = hclog.NewNullLogger()
	srv, err := NewServer(cfg)
	if srv != nil {
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return srv, err
}

// Issue 19 item 3: damage to the newest segment that raft-wal itself reads as a shorter log
// (zeroed head) or that the segment checks catch (cut short, deleted) must be refused with
// the file and the whole range of applied entries it lost, never a silent rollback.
func TestSecurity_LogEndingBeforeAppliedIndexRefusesToStart(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, seg string)
		want   string
	}{
		{
			name: "newest segment's first 64 bytes zeroed",
			damage: func(t *testing.T, seg string) {
				f, err := os.OpenFile(seg, os.O_WRONLY, 0)
				must.NoError(t, err)
				_, err = f.WriteAt(make([]byte, 64), 0)
				must.NoError(t, err)
				must.NoError(t, f.Close())
			},
			want: "the segment's first frame is zeroed but committed batches follow it",
		},
		{
			// Nothing in the file tells this from a segment never written to: only the
			// record of the applied index does.
			name: "newest segment zeroed whole, size kept",
			damage: func(t *testing.T, seg string) {
				fi, err := os.Stat(seg)
				must.NoError(t, err)
				must.NoError(t, os.WriteFile(seg, make([]byte, fi.Size()), 0o644))
			},
			want: "the log ends at index",
		},
		{
			name: "newest segment truncated",
			damage: func(t *testing.T, seg string) {
				fi, err := os.Stat(seg)
				must.NoError(t, err)
				must.NoError(t, os.Truncate(seg, fi.Size()/2))
			},
			want: "shorter than",
		},
		{
			name:   "newest segment deleted",
			damage: func(t *testing.T, seg string) { must.NoError(t, os.Remove(seg)) },
			want:   "the segment file is missing",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, seg, applied := segmentedDataDir(t)
			base := newestBase(t, segmentFiles(t, dir))
			tc.damage(t, seg)

			srv, err := restartSegmented(t, dir)
			must.Nil(t, srv)
			var damage *raftutil.Damage
			must.True(t, errors.As(err, &damage), must.Sprintf("not a raftutil.Damage: %v", err))
			must.Eq(t, seg, damage.File)
			must.Eq(t, base, damage.Index)
			must.Eq(t, applied, damage.Through)
			must.StrContains(t, err.Error(), tc.want)
			must.StrContains(t, err.Error(), fmt.Sprintf("entries %d to %d are lost", base, applied))
			must.StrContains(t, err.Error(), raftutil.AppliedFile(dir))
			must.StrContains(t, err.Error(), "nomad operator raft logs -verify")
			must.StrContains(t, err.Error(), "Recovering a damaged data dir")
		})
	}
}

func TestRaftLog_SegmentedDataDirRestartsWithEverything(t *testing.T) {
	dir, _, applied := segmentedDataDir(t)
	srv, err := restartSegmented(t, dir)
	must.NoError(t, err)
	waitForJob(t, srv, "job-0")
	must.NoError(t, srv.Shutdown())
	got, err := raftutil.ReadApplied(raftutil.AppliedFile(dir))
	must.NoError(t, err)
	must.GreaterEq(t, applied, got, must.Sprint("the record never goes back"))
}

// The record itself damaged is refused, naming it, rather than silently skipping the check.
func TestSecurity_DamagedAppliedRecordRefusesToStart(t *testing.T) {
	dir, _ := writtenDataDir(t)
	path := raftutil.AppliedFile(dir)
	raw, err := os.ReadFile(path)
	must.NoError(t, err)
	raw[5] ^= 0x40
	must.NoError(t, os.WriteFile(path, raw, 0o600))

	srv, err := restart(t, dir)
	must.Nil(t, srv)
	var damage *raftutil.Damage
	must.True(t, errors.As(err, &damage), must.Sprintf("not a raftutil.Damage: %v", err))
	must.Eq(t, path, damage.File)
	must.StrContains(t, err.Error(), raftutil.ErrAppliedRecord.Error())
}

// The documented way to accept a loss (truncate past the end, which rewrites the log keeping
// every entry left) lowers the record, so the server starts on what is left.
func TestRaftLog_TruncateAcceptsTheLossAndTheServerStarts(t *testing.T) {
	dir, seg, applied := segmentedDataDir(t)
	f, err := os.OpenFile(seg, os.O_WRONLY, 0)
	must.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 64), 0)
	must.NoError(t, err)
	must.NoError(t, f.Close())

	o, err := raftutil.OpenOffline(dir, time.Second)
	must.NoError(t, err)
	must.SliceNotEmpty(t, o.Damages, must.Sprint("logs -verify must report the lost range"))
	_, last := o.Range()
	must.Less(t, applied, last)
	rep, err := o.Truncate(last+1, time.Now())
	o.Close()
	must.NoError(t, err)
	must.True(t, rep.AppliedLowered)

	srv, err := restartSegmented(t, dir)
	must.NoError(t, err)
	waitForJob(t, srv, "job-0")
}

// A deleted sealed segment loses the range the metadata lists for it, not everything after.
func TestRaftLog_DeletedSealedSegmentNamesItsOwnRange(t *testing.T) {
	dir, _, _ := segmentedDataDir(t)
	files := segmentFiles(t, dir)
	victim := files[len(files)-2]
	var base, id uint64
	_, err := fmt.Sscanf(filepath.Base(victim), "%020d-%016x.wal", &base, &id)
	must.NoError(t, err)
	nextBase := newestBase(t, files)
	must.NoError(t, os.Remove(victim))

	srv, err := restartSegmented(t, dir)
	must.Nil(t, srv)
	var damage *raftutil.Damage
	must.True(t, errors.As(err, &damage), must.Sprintf("not a raftutil.Damage: %v", err))
	must.Eq(t, victim, damage.File)
	must.Eq(t, base, damage.Index)
	must.Eq(t, nextBase-1, damage.Through)
	must.StrContains(t, err.Error(), fmt.Sprintf("entries %d to %d", base, nextBase-1))
}

// A data dir from before the applied-index record: a zeroed head is still caught, by the
// committed batches behind it.
func TestSecurity_ZeroedSegmentHeadRefusedWithoutTheRecord(t *testing.T) {
	dir, seg, _ := segmentedDataDir(t)
	must.NoError(t, os.Remove(raftutil.AppliedFile(dir)))
	f, err := os.OpenFile(seg, os.O_WRONLY, 0)
	must.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 64), 0)
	must.NoError(t, err)
	must.NoError(t, f.Close())

	srv, err := restartSegmented(t, dir)
	must.Nil(t, srv)
	var damage *raftutil.Damage
	must.True(t, errors.As(err, &damage), must.Sprintf("not a raftutil.Damage: %v", err))
	must.Eq(t, seg, damage.File)
	must.StrContains(t, err.Error(), "first frame is zeroed")
}
