package command

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nomadfork/nomad/client/statefile"
	"github.com/nomadfork/nomad/raftutil"
)

// The offline operator raft commands (logs, skip, truncate) work on a stopped server's data dir, not over HTTP: they are the
// way back for a log the server refuses to start with. They import raftutil only
// (outside nomad/, importing only structs: scripts/check-imports.sh holds it to that), never the server.

// raftLockTimeout bounds the wait for the WAL metadata DB's lock, which a running agent holds.
const raftLockTimeout = 2 * time.Second

const operatorHelp = `
Usage: nomad operator <subcommand> [options] [args]

  Cluster operator tools.
`

const operatorRaftHelp = `
Usage: nomad operator raft <subcommand> [options] [args]

  list-peers and remove-peer work on a running cluster over HTTP. logs, skip
  and truncate inspect and repair a stopped server's Raft log in its data dir:
  the agent must be stopped, as they refuse to run while it holds the data dir.
`

// OperatorRaftLogsCommand lists and verifies the entries of a stopped server's log.
type OperatorRaftLogsCommand struct {
	Meta
}

func (c *OperatorRaftLogsCommand) Help() string {
	return localHelp(`
Usage: nomad operator raft logs [-verify] <data_dir>

  List the Raft log entries in a stopped server's data dir with their index,
  term, log type, message type, size and status: the checksum and the decode
  the server checks at start. "legacy" entries were written before entries
  carried checksums: damage inside them cannot be detected.

Options:

  -verify
    Print only damaged entries and segment files, then a summary. Exits 2 when
    anything is damaged.
`)
}

func (c *OperatorRaftLogsCommand) Synopsis() string {
	return "List and verify a server's Raft log offline"
}

func (c *OperatorRaftLogsCommand) Run(args []string) int {
	var verify bool
	fs := c.FlagSet("operator raft logs")
	fs.BoolVar(&verify, "verify", false, "")
	pos, code, ok := c.parseArgs(fs, args, "<data_dir>")
	if !ok {
		return code
	}
	o, err := raftutil.OpenOffline(pos[0], raftLockTimeout)
	if err != nil {
		return c.fail("Error opening the raft log: %v", err)
	}
	defer o.Close()

	rows := []string{"Index|Term|Type|Message|Size|Status"}
	damaged, legacy, total := 0, 0, 0
	err = o.Walk(func(st raftutil.Status) error {
		total++
		if st.Legacy {
			legacy++
		}
		if st.Err != nil {
			damaged++
		} else if verify {
			return nil
		}
		msg := st.MsgType
		if msg == "" {
			msg = "-"
		}
		rows = append(rows, fmt.Sprintf("%d|%d|%s|%s|%d|%s", st.Index, st.Term, st.LogType, msg, st.Size, entryStatus(st, o)))
		return nil
	})
	if err != nil {
		return c.fail("Error reading the raft log: %v", err)
	}
	if len(rows) > 1 {
		c.Ui.Output(formatList(rows))
	}
	for _, d := range o.Damages {
		c.Ui.Output(fmt.Sprintf("DAMAGED segment file %s (from index %d): %s", d.File, d.Index, d.Reason))
	}
	first, last := o.Range()
	summary := fmt.Sprintf("%d entries (%d to %d), %d damaged, %d damaged segment files, %d legacy entries without checksum", total, first, last, damaged, len(o.Damages), legacy)
	if len(o.Snapshots) > 0 {
		summary += fmt.Sprintf("; newest snapshot at index %d", o.Snapshots[0].Index)
	}
	if verify || damaged+len(o.Damages) > 0 {
		c.Ui.Output(summary)
	}
	if damaged+len(o.Damages) > 0 {
		return 2
	}
	return 0
}

func entryStatus(st raftutil.Status, o *raftutil.Offline) string {
	switch {
	case st.Err != nil:
		return fmt.Sprintf("DAMAGED (%s): %v", o.File(st.Index), st.Err)
	case st.Legacy:
		return "ok, legacy (no checksum)"
	case st.MsgType != "":
		return fmt.Sprintf("ok, crc32c %08x", st.Checksum)
	}
	return "ok"
}

// OperatorRaftSkipCommand replaces one damaged entry with a no-op.
type OperatorRaftSkipCommand struct {
	Meta
}

func (c *OperatorRaftSkipCommand) Help() string {
	return localHelp(`
Usage: nomad operator raft skip -index=<index> <data_dir>

  Rewrite a stopped server's Raft log with the damaged command entry at
  <index> replaced by a no-op that the state machine ignores. Every other
  entry is kept, so only that one write is lost. The old log directory is
  kept as <data_dir>/server/raft/wal.backup-<time>. In a cluster, skip an
  entry that every server holds damaged (a poison-pill write) on every
  server; damage on one server's disk is repaired with 'truncate' on that
  server instead, so that the leader sends it the entries again.

Options:

  -index=<index>
    The entry to replace; 'nomad operator raft logs -verify' names it.
`)
}

func (c *OperatorRaftSkipCommand) Synopsis() string {
	return "Replace a damaged Raft log entry with a no-op"
}

func (c *OperatorRaftSkipCommand) Run(args []string) int {
	var index optUint
	fs := c.FlagSet("operator raft skip")
	fs.Var(&index, "index", "")
	return c.repair(fs, args, "index", func() (uint64, bool) { return index.v, index.set },
		func(o *raftutil.Offline, i uint64) (*raftutil.Repair, error) { return o.Skip(i, time.Now()) },
		"Replaced entry %d with a no-op")
}

// OperatorRaftTruncateCommand drops the log from a damaged entry on.
type OperatorRaftTruncateCommand struct {
	Meta
}

func (c *OperatorRaftTruncateCommand) Help() string {
	return localHelp(`
Usage: nomad operator raft truncate -from=<index> <data_dir>

  Rewrite a stopped server's Raft log without the entries from <index> on,
  so the server starts from its newest snapshot and the intact entries before
  <index>. The writes in the dropped entries are lost on this server (a
  cluster's leader sends them again to a follower). When <index> is at or
  below the newest snapshot, the whole log is dropped and the server starts
  from that snapshot; when it is past the last index, nothing is dropped and
  the log is only rewritten. The old log directory is kept as
  <data_dir>/server/raft/wal.backup-<time>.

Options:

  -from=<index>
    The first entry to drop.
`)
}

func (c *OperatorRaftTruncateCommand) Synopsis() string { return "Drop a damaged tail of the Raft log" }

func (c *OperatorRaftTruncateCommand) Run(args []string) int {
	var from optUint
	fs := c.FlagSet("operator raft truncate")
	fs.Var(&from, "from", "")
	return c.repair(fs, args, "from", func() (uint64, bool) { return from.v, from.set },
		func(o *raftutil.Offline, i uint64) (*raftutil.Repair, error) { return o.Truncate(i, time.Now()) },
		"Dropped the entries from index %d on")
}

// repair is the shared body of skip and truncate: parse, open the log, rewrite, report.
func (m *Meta) repair(fs *flag.FlagSet, args []string, flagName string, index func() (uint64, bool),
	do func(*raftutil.Offline, uint64) (*raftutil.Repair, error), doneFormat string) int {
	pos, code, ok := m.parseArgs(fs, args, "<data_dir>")
	if !ok {
		return code
	}
	i, set := index()
	if !set {
		return m.fail("-%s=<index> is required", flagName)
	}
	o, err := raftutil.OpenOffline(pos[0], raftLockTimeout)
	if err != nil {
		return m.fail("Error opening the raft log: %v", err)
	}
	defer o.Close()
	rep, err := do(o, i)
	if err != nil {
		var damage *raftutil.Damage
		if errors.As(err, &damage) {
			return m.fail("Error rewriting the raft log: %v", err)
		}
		return m.fail("Error: %v", err)
	}
	m.Ui.Output(fmt.Sprintf(doneFormat, i))
	if rep.Last == 0 {
		m.Ui.Output("The log is now empty: the server starts from its newest snapshot")
	} else {
		m.Ui.Output(fmt.Sprintf("The log now holds entries %d to %d", rep.First, rep.Last))
	}
	m.Ui.Output("The old log is kept in " + rep.Backup)
	return 0
}

// OperatorClientStateCommand prints what a stopped client kept in its state file.
type OperatorClientStateCommand struct {
	Meta
}

func (c *OperatorClientStateCommand) Help() string {
	return localHelp(`
Usage: nomad operator client-state [options] <path>

  Print, as JSON, what a client keeps in its local state file to find its
  tasks again after a restart: each allocation as last received from the
  servers, and for each task the handle the client re-attaches with
  (LocalState) and the state it reports (RemoteState). Values that hold
  secrets (token secrets, keys, passwords) are redacted.

  <path> is the agent's data_dir (the file is client/state.db under it), a
  client state_dir, or the state.db file itself. The agent must be stopped:
  a running agent holds the file.

  This is a low-level debugging tool; its output's shape may change.
`)
}

func (c *OperatorClientStateCommand) Synopsis() string { return "Dump the client's local state" }

func (c *OperatorClientStateCommand) Run(args []string) int {
	fs := c.FlagSet("operator client-state")
	pos, code, ok := c.parseArgs(fs, args, "<path>")
	if !ok {
		return code
	}
	path, err := clientStatePath(pos[0])
	if err != nil {
		return c.fail("Error finding the client state file: %v", err)
	}
	dump, err := statefile.Read(path)
	if err != nil {
		return c.fail("Error reading the client state: %v", err)
	}
	// Decode to plain values so the redaction sees every nested key.
	raw, err := json.Marshal(dump)
	if err != nil {
		return c.fail("Error encoding the client state: %v", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return c.fail("Error encoding the client state: %v", err)
	}
	return c.printJSON(redactSecrets(v))
}

// clientStatePath finds the state file from a data dir, a state dir or the file itself.
func clientStatePath(p string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return p, nil
	}
	for _, candidate := range []string{statefile.PathInDataDir(p), filepath.Join(p, statefile.FileName)} {
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return "", errors.New("no client state file in " + p + " (looked for client/" + statefile.FileName + " and " + statefile.FileName + ")")
}
