package nomad

import (
	"errors"
	"strconv"
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// readCommandEntries returns every command entry of a stopped server's log.
func readCommandEntries(t *testing.T, dir string) []*raft.Log {
	t.Helper()
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(raftutil.WALDir(dir), wal.WithMetaStore(meta))
	must.NoError(t, err)
	defer meta.Close()
	defer w.Close()
	first, err := w.FirstIndex()
	must.NoError(t, err)
	last, err := w.LastIndex()
	must.NoError(t, err)
	var out []*raft.Log
	for i := first; i <= last; i++ {
		l := new(raft.Log)
		must.NoError(t, w.GetLog(i, l))
		if l.Type == raft.LogCommand {
			out = append(out, l)
		}
	}
	return out
}

// Every entry the server writes carries its schema version to the followers' FSMs.
func TestRaftLog_EntriesAreStampedWithTheSchemaVersion(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir })
	_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID("stamped")})
	must.NoError(t, err)
	must.NoError(t, srv.Shutdown())

	entries := readCommandEntries(t, dir)
	must.SliceNotEmpty(t, entries)
	for _, l := range entries {
		must.Eq(t, structs.EntryExtensions(), l.Extensions, must.Sprintf("entry %d", l.Index))
		v, err := structs.EntrySchemaVersion(l.Extensions)
		must.NoError(t, err)
		must.Eq(t, structs.SchemaVersion, v)
	}
}

// A server whose log holds an entry of a newer release (it was replicated before the server
// stopped at it) refuses to start, saying to upgrade it, and not that the log is damaged: a
// repair would throw away a committed write. operator raft skip refuses to drop it too.
func TestRaftLog_NewerSchemaEntryRefusesStartAndRepair(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir })
	_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID("before")})
	must.NoError(t, err)
	must.NoError(t, srv.Shutdown())

	buf, err := structs.EncodeEntry(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID("newer")})
	must.NoError(t, err)
	index := appendStamped(t, dir, buf, structs.EntryExtensionsAt(structs.SchemaVersion+1))

	srv, err = restart(t, dir)
	must.Nil(t, srv)
	must.ErrorIs(t, err, structs.ErrEntryNewerSchema)
	var damage *raftutil.Damage
	must.False(t, errors.As(err, &damage), must.Sprintf("reported as damage: %v", err))
	must.StrContains(t, err.Error(), "index "+strconv.FormatUint(index, 10))
	must.StrContains(t, err.Error(), "upgrade this server")

	code, out := runCLI(t, "operator raft skip", "-index="+strconv.FormatUint(index, 10), dir)
	must.NotEq(t, 0, code, must.Sprint(out))
	must.StrContains(t, out, "written by a newer release")
	entries := readCommandEntries(t, dir)
	must.Eq(t, index, entries[len(entries)-1].Index, must.Sprint("skip rewrote the log"))
}

// appendStamped appends one command entry with the given extensions to a stopped server's
// log, in the last entry's term, and returns its index.
func appendStamped(t *testing.T, dir string, data, ext []byte) uint64 {
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
	must.NoError(t, w.StoreLogs([]*raft.Log{{Index: last + 1, Term: tail.Term, Type: raft.LogCommand, Data: data, Extensions: ext}}))
	return last + 1
}
