package command

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/cli"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/raftutil"
)

// maxSnapshotFile bounds what inspect and restore read from disk: the server's own limit on
// an upload (structs.MaxSnapshotSize).
const maxSnapshotFile = 512 << 20

const operatorSnapshotHelp = `
Usage: nomad operator snapshot <subcommand> [options] <file>

  Save, restore and inspect point-in-time snapshots of the servers' state
  (jobs, nodes, allocations, variables, ACLs) for disaster recovery. With ACLs
  enabled, save and restore need a management token.
`

// newOperatorSnapshotSave saves a snapshot to a file.
func newOperatorSnapshotSave(m Meta) cli.Command {
	var stale bool
	return &command{Meta: m, name: "operator snapshot save", synopsis: "Saves a snapshot of Nomad server state",
		usage: `
Usage: nomad operator snapshot save [options] <file>

  Save an atomic, point-in-time snapshot of the cluster state to <file>. The
  file is written only once the whole archive arrived and its checksums hold.
`,
		heading: "Snapshot Save",
		options: []option{
			boolOpt(&stale, "-stale", "Take the snapshot from the agent's server even if it is not the leader."),
		},
		args: []string{"<file>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			path := pos[0]
			rc, err := client.Operator().Snapshot(queryOpts(stale))
			if err != nil {
				return c.fail("Failed to get snapshot file: %v", err)
			}
			defer rc.Close()
			// The client checks the Digest header at EOF, so the whole body is read before the file
			// is put in place.
			archive, err := io.ReadAll(io.LimitReader(rc, maxSnapshotFile+1))
			if err != nil {
				return c.fail("Failed to read snapshot: %v", err)
			}
			if _, err := raftutil.ReadSnapshotArchive(bytes.NewReader(archive), maxSnapshotFile); err != nil {
				return c.fail("Snapshot is damaged: %v", err)
			}
			tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
			if err != nil {
				return c.fail("Failed to create snapshot file: %v", err)
			}
			defer os.Remove(tmp.Name())
			if _, err := tmp.Write(archive); err != nil {
				tmp.Close()
				return c.fail("Failed to write snapshot file: %v", err)
			}
			if err := tmp.Sync(); err != nil {
				tmp.Close()
				return c.fail("Failed to write snapshot file: %v", err)
			}
			if err := tmp.Close(); err != nil {
				return c.fail("Failed to write snapshot file: %v", err)
			}
			if err := os.Rename(tmp.Name(), path); err != nil {
				return c.fail("Failed to move snapshot file into place: %v", err)
			}
			c.Ui.Output(fmt.Sprintf("State file written to %s", path))
			return 0
		},
	}
}

// newOperatorSnapshotRestore restores a snapshot file into the cluster.
func newOperatorSnapshotRestore(m Meta) cli.Command {
	return &command{Meta: m, name: "operator snapshot restore", synopsis: "Restore snapshot of Nomad server state",
		usage: `
Usage: nomad operator snapshot restore [options] <file>

  Restore the cluster state from a snapshot file saved with "operator
  snapshot save". Everything the cluster holds is replaced by the snapshot's
  state. This is meant for disaster recovery into a fresh cluster. The
  servers check the archive whole before they restore it.
`,
		args: []string{"<file>"},
		withClient: func(c *command, client *api.Client, pos []string) int {
			archive, err := readSnapshotFile(pos[0])
			if err != nil {
				return c.fail("Error reading snapshot: %v", err)
			}
			if _, err := client.Operator().SnapshotRestore(bytes.NewReader(archive), nil); err != nil {
				return c.fail("Failed to restore snapshot: %v", err)
			}
			c.Ui.Output("Snapshot Restored")
			return 0
		},
	}
}

func readSnapshotFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxSnapshotFile+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxSnapshotFile {
		return nil, fmt.Errorf("%s is larger than the limit of %d bytes", path, maxSnapshotFile)
	}
	return raw, nil
}

// OperatorSnapshotInspectCommand describes a snapshot file; it needs no agent.
type OperatorSnapshotInspectCommand struct {
	Meta
}

func (c *OperatorSnapshotInspectCommand) Help() string {
	return localHelp(`
Usage: nomad operator snapshot inspect [options] <file>

  Display the metadata of a snapshot file (ID, size, Raft index and term,
  version) and how many rows of each table it holds. The file is read
  locally; no agent is contacted.

Snapshot Inspect Options:

  -json
    Output the snapshot's information as JSON.
`)
}

func (c *OperatorSnapshotInspectCommand) Synopsis() string {
	return "Displays information about a Nomad snapshot file"
}

// snapshotInfo is what inspect reports.
type snapshotInfo struct {
	ID      string
	Size    int64
	Index   uint64
	Term    uint64
	Version int
	// SchemaVersion is the persisted schema the state was written at (0: before snapshots
	// recorded it).
	SchemaVersion int
	Created       *time.Time `json:",omitempty"`
	Tables        []raftutil.TableStat
}

func (c *OperatorSnapshotInspectCommand) Run(args []string) int {
	var asJSON bool
	fs := c.FlagSet("operator snapshot inspect")
	fs.BoolVar(&asJSON, "json", false, "")
	pos, code, ok := c.parseArgs(fs, args, "<file>")
	if !ok {
		return code
	}
	raw, err := readSnapshotFile(pos[0])
	if err != nil {
		return c.fail("Error opening snapshot file: %v", err)
	}
	arch, err := raftutil.ReadSnapshotArchive(bytes.NewReader(raw), maxSnapshotFile)
	if err != nil {
		return c.fail("Error verifying snapshot: %v", err)
	}
	tables, err := raftutil.SnapshotTableStats(arch.State)
	if err != nil {
		return c.fail("Error reading snapshot state: %v", err)
	}
	schema, err := raftutil.SnapshotSchemaVersion(arch.State)
	if err != nil {
		return c.fail("Error reading snapshot state: %v", err)
	}
	info := &snapshotInfo{
		ID: arch.Meta.ID, Size: arch.Meta.Size, Index: arch.Meta.Index, Term: arch.Meta.Term,
		Version: int(arch.Meta.Version), SchemaVersion: schema, Created: snapshotCreated(arch.Meta.ID), Tables: tables,
	}
	return printResult(&c.Meta, info, asJSON, formatSnapshotInfo)
}

// snapshotCreated reads the time Raft puts at the end of a snapshot ID ("term-index-ms").
func snapshotCreated(id string) *time.Time {
	parts := strings.Split(id, "-")
	if len(parts) != 3 {
		return nil
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || ms <= 0 {
		return nil
	}
	t := time.UnixMilli(ms)
	return &t
}

func formatSnapshotInfo(info *snapshotInfo) string {
	var rows []string
	if info.Created != nil {
		rows = append(rows, "Created|"+info.Created.Format(time.RFC3339))
	}
	rows = append(rows,
		"ID|"+info.ID,
		"Size|"+humanBytes(info.Size),
		"Index|"+strconv.FormatUint(info.Index, 10),
		"Term|"+strconv.FormatUint(info.Term, 10),
		"Version|"+strconv.Itoa(info.Version),
		"Schema Version|"+strconv.Itoa(info.SchemaVersion),
	)
	table := []string{"Type|Count|Size"}
	var count int
	var size int64
	for _, t := range info.Tables {
		table = append(table, fmt.Sprintf("%s|%d|%s", t.Table, t.Count, humanBytes(t.Size)))
		count += t.Count
		size += t.Size
	}
	table = append(table, fmt.Sprintf("Total|%d|%s", count, humanBytes(size)))
	return formatKV(rows) + "\n\n" + formatList(table)
}

// humanBytes prints a size in binary units ("158 KiB"), as upstream's inspect does.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	suffix := []string{"KiB", "MiB", "GiB", "TiB"}[exp]
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, suffix)
	}
	return fmt.Sprintf("%.0f %s", v, suffix)
}
