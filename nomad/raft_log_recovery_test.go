package nomad

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/nomadfork/nomad/command"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// poisonedDataDir is a data dir as a poison-pill entry left it before the leader's decode
// check existed: a server wrote job "before"; then, at the log store level with the server
// stopped, an entry the FSM cannot decode and two good entries after it were appended. It
// returns the dir and the poison entry's index.
func poisonedDataDir(t *testing.T) (string, uint64) {
	t.Helper()
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir })
	_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID("before")})
	must.NoError(t, err)
	must.NoError(t, srv.Shutdown())

	deep := mock.JobWithID("poison")
	deep.TaskGroups[0].Tasks[0].Config = deepConfig(structs.LogCodecMaxDepth + 10)
	var entries [][]byte
	for _, job := range []*structs.Job{deep, mock.JobWithID("later-1"), mock.JobWithID("later-2")} {
		buf, err := structs.EncodeEntry(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
		must.NoError(t, err)
		entries = append(entries, buf)
	}
	return dir, appendToLog(t, dir, entries)
}

// appendToLog appends command entries to a stopped server's log at the log store level, in
// the last entry's term, and returns the first new index.
func appendToLog(t *testing.T, dir string, entries [][]byte) uint64 {
	t.Helper()
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(raftutil.WALDir(dir), wal.WithMetaStore(meta))
	must.NoError(t, err)
	defer meta.Close()
	defer w.Close()
	last, err := w.LastIndex()
	must.NoError(t, err)
	var tail raft.Log
	must.NoError(t, w.GetLog(last, &tail))
	var logs []*raft.Log
	for i, data := range entries {
		logs = append(logs, &raft.Log{Index: last + 1 + uint64(i), Term: tail.Term, Type: raft.LogCommand, Data: data})
	}
	must.NoError(t, w.StoreLogs(logs))
	return last + 1
}

// Upgrade: a data dir written before entries carried checksums holds type byte + msgpack
// entries; a server of this version verifies and applies them.
func TestRaftLog_LegacyEntriesFromOlderVersionsStillApply(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir })
	must.NoError(t, srv.Shutdown())
	var entries [][]byte
	for _, id := range []string{"old-1", "old-2"} {
		buf, err := structs.Encode(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID(id)})
		must.NoError(t, err)
		entries = append(entries, buf)
	}
	appendToLog(t, dir, entries)

	srv, err := restart(t, dir)
	must.NoError(t, err)
	waitForJob(t, srv, "old-2")
	must.True(t, hasJob(t, srv, "old-1"))
}

// runCLI runs one nomad CLI command line and returns its exit code and output.
func runCLI(t *testing.T, name string, args ...string) (int, string) {
	t.Helper()
	ui := cli.NewMockUi()
	factory, ok := command.Commands(ui)[name]
	must.True(t, ok, must.Sprintf("no command %q", name))
	cmd, err := factory()
	must.NoError(t, err)
	code := cmd.Run(args)
	return code, ui.OutputWriter.String() + ui.ErrorWriter.String()
}

func hasJob(t *testing.T, srv *Server, id string) bool {
	t.Helper()
	got, err := srv.State().JobByID(nil, "default", id)
	must.NoError(t, err)
	return got != nil
}

// Finding 3, recovery: a data dir already holding a poison-pill entry must be recoverable with
// the documented commands. Before, the server panicked ~2 s after every election and nothing
// could repair the log.
func TestSecurity_PoisonedDataDirIsRecoveredByOperatorCommands(t *testing.T) {
	cases := []struct {
		name     string
		repair   func(dir string, poison uint64) (int, string)
		wantJobs []string
		goneJobs []string
	}{
		{
			name: "skip keeps every other write",
			repair: func(dir string, poison uint64) (int, string) {
				return runCLI(t, "operator raft skip", "-index="+strconv.FormatUint(poison, 10), dir)
			},
			wantJobs: []string{"before", "later-1", "later-2"},
			goneJobs: []string{"poison"},
		},
		{
			name: "truncate keeps the intact prefix",
			repair: func(dir string, poison uint64) (int, string) {
				return runCLI(t, "operator raft truncate", "-from="+strconv.FormatUint(poison, 10), dir)
			},
			wantJobs: []string{"before"},
			goneJobs: []string{"poison", "later-1", "later-2"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, poison := poisonedDataDir(t)

			srv, err := restart(t, dir)
			must.Nil(t, srv)
			var damage *raftutil.Damage
			must.True(t, errors.As(err, &damage), must.Sprintf("not a raftutil.Damage: %v", err))
			must.Eq(t, poison, damage.Index)
			must.StrContains(t, err.Error(), "nests deeper than the log codec allows")

			code, out := runCLI(t, "operator raft logs", "-verify", dir)
			must.Eq(t, 2, code, must.Sprint(out))
			must.StrContains(t, out, "DAMAGED")
			must.StrContains(t, out, "1 damaged")

			code, out = tc.repair(dir, poison)
			must.Eq(t, 0, code, must.Sprint(out))
			must.StrContains(t, out, "The old log is kept in")
			backups, err := filepath.Glob(raftutil.WALDir(dir) + ".backup-*")
			must.NoError(t, err)
			must.SliceLen(t, 1, backups)

			code, out = runCLI(t, "operator raft logs", "-verify", dir)
			must.Eq(t, 0, code, must.Sprint(out))

			srv, err = restart(t, dir)
			must.NoError(t, err)
			waitForJob(t, srv, tc.wantJobs[len(tc.wantJobs)-1])
			for _, id := range tc.wantJobs {
				must.True(t, hasJob(t, srv, id), must.Sprintf("job %s lost", id))
			}
			for _, id := range tc.goneJobs {
				must.False(t, hasJob(t, srv, id), must.Sprintf("job %s present", id))
			}
			// The repaired server takes writes again.
			_, err = srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID("fresh")})
			must.NoError(t, err)
		})
	}
}

func TestRaftLog_OfflineToolsRefuseARunningAgentsDataDir(t *testing.T) {
	dir := t.TempDir()
	testServer(t, func(c *Config) { c.DataDir = dir })
	start := time.Now()
	_, err := raftutil.OpenOffline(dir, 200*time.Millisecond)
	must.ErrorIs(t, err, raftutil.ErrDataDirInUse)
	must.Less(t, 5*time.Second, time.Since(start))

	code, out := runCLI(t, "operator raft skip", "-index=3", dir)
	must.Eq(t, 1, code)
	must.StrContains(t, out, "in use by a running agent")
	_, err = os.Stat(raftutil.WALDir(dir) + ".new")
	must.True(t, os.IsNotExist(err))
}
