package command

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nomadfork/nomad/client/statefile"
)

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
