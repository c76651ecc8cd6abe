package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// raftDataDir writes a stopped server's log directly with raft-wal: a configuration entry, a
// legacy (pre-checksum) command, a checksummed one and one the FSM cannot decode.
func raftDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	walDir := raftutil.WALDir(dir)
	must.NoError(t, os.MkdirAll(walDir, 0o700))
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(walDir, wal.WithMetaStore(meta))
	must.NoError(t, err)
	legacy, err := structs.Encode(structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{"a"}})
	must.NoError(t, err)
	current, err := structs.EncodeEntry(structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{"b"}})
	must.NoError(t, err)
	bad, err := structs.EncodeEntry(structs.NamespaceDeleteRequestType, "not a request")
	must.NoError(t, err)
	cfg := raft.EncodeConfiguration(raft.Configuration{Servers: []raft.Server{{ID: "s1", Address: "s1"}}})
	must.NoError(t, w.StoreLogs([]*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: cfg},
		{Index: 2, Term: 1, Type: raft.LogCommand, Data: legacy},
		{Index: 3, Term: 2, Type: raft.LogCommand, Data: current},
		{Index: 4, Term: 2, Type: raft.LogCommand, Data: bad},
	}))
	must.NoError(t, w.SetUint64([]byte("CurrentTerm"), 2))
	must.NoError(t, w.Close())
	must.NoError(t, meta.Close())
	return dir
}

func TestOperatorRaft_Commands(t *testing.T) {
	dir := raftDataDir(t)
	seg := filepath.Join(raftutil.WALDir(dir), "00000000000000000001-0000000000000000.wal")
	damaged := "DAMAGED (" + seg + "): log entry does not decode: NamespaceDelete: "

	code, out, errOut := runCLI(t, "http://unused", "", "operator", "raft", "logs", dir)
	must.Eq(t, 2, code, must.Sprint(errOut))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	must.SliceLen(t, 6, lines)
	must.Eq(t, "Index  Term  Type              Message          Size  Status", lines[0])
	must.StrHasPrefix(t, "1      1     LogConfiguration  -", lines[1])
	must.StrHasSuffix(t, "ok", lines[1])
	must.StrHasSuffix(t, "ok, legacy (no checksum)", lines[2])
	must.StrContains(t, lines[3], "NamespaceDelete")
	must.StrContains(t, lines[3], "ok, crc32c ")
	must.StrContains(t, lines[4], damaged)
	must.Eq(t, "4 entries (1 to 4), 1 damaged, 0 damaged segment files, 1 legacy entries without checksum", lines[5])

	code, out, _ = runCLI(t, "http://unused", "", "operator", "raft", "logs", "-verify", dir)
	must.Eq(t, 2, code)
	must.Eq(t, 3, len(strings.Split(strings.TrimSpace(out), "\n")), must.Sprint(out))

	code, _, errOut = runCLI(t, "http://unused", "", "operator", "raft", "skip", "-index=3", dir)
	must.Eq(t, 1, code)
	must.Eq(t, "Error: entry 3 is intact; skipping it would lose a write\n", errOut)

	code, out, errOut = runCLI(t, "http://unused", "", "operator", "raft", "skip", "-index=4", dir)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, "Replaced entry 4 with a no-op\nThe log now holds entries 1 to 4\nThe old log is kept in "+raftutil.WALDir(dir)+".backup-")

	code, out, _ = runCLI(t, "http://unused", "", "operator", "raft", "logs", dir)
	must.Eq(t, 0, code)
	must.StrContains(t, out, "4      2     LogNoop")
}

func TestOperatorRaft_Arguments(t *testing.T) {
	empty := t.TempDir()
	runCLICases(t, []cliCase{
		{name: "logs no dir", args: []string{"operator", "raft", "logs"}, code: 1,
			stderr: "This command takes one argument: <data_dir>\n"},
		{name: "skip without index", args: []string{"operator", "raft", "skip", empty}, code: 1,
			stderr: "-index=<index> is required\n"},
		{name: "truncate without from", args: []string{"operator", "raft", "truncate", empty}, code: 1,
			stderr: "-from=<index> is required\n"},
		{name: "transfer without a peer", args: []string{"operator", "raft", "transfer-leadership"}, code: 1,
			stderr: "Give exactly one of -peer-id and -peer-address\n"},
		{name: "transfer with both", args: []string{"operator", "raft", "transfer-leadership", "-peer-id=a", "-peer-address=b:1"}, code: 1,
			stderr: "Give exactly one of -peer-id and -peer-address\n"},
		{name: "not a data dir", args: []string{"operator", "raft", "logs", empty}, code: 1,
			stderr: "Error opening the raft log: no server raft log in " + empty + ": stat " +
				filepath.Join(raftutil.WALDir(empty), "wal-meta.db") + ": no such file or directory\n"},
	})
}
