package nomad

import (
	"errors"
	"fmt"
	"github.com/nomadfork/nomad/nomad/fsm"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/state"
)

// peersFile is where an operator writes the Raft configuration to start from when the stored
// one can no longer elect a leader (servers lost for good, or a voter that never existed).
const peersFile = "peers.json"

// recoverPeers applies <data_dir>/server/raft/peers.json, if present, before Raft starts: the
// stored configuration is replaced by the file's (raft's outage recovery), the file is removed
// so the override happens once, and the log and snapshots are kept. The file has raft's
// version-3 shape: [{"id": "...", "address": "host:port", "non_voter": false}].
func (s *Server) recoverPeers(rc *raft.Config, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore) error {
	if s.config.DataDir == "" {
		return nil
	}
	path := filepath.Join(s.config.DataDir, "server", "raft", peersFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	cfg, err := raft.ReadConfigJSON(path)
	if err != nil {
		return fmt.Errorf("reading the recovery configuration %s: %w", path, err)
	}
	// Recovery replays the log into an FSM of its own: the server's store, broker and
	// commit hook must see nothing until Raft restores them from the snapshot it writes.
	scratch, err := fsm.NewFSM(s.logger.Named("recovery"), state.Config{JobTrackedVersions: s.config.JobTrackedVersions}, nil)
	if err != nil {
		return err
	}
	if err := raft.RecoverCluster(rc, scratch, logs, stable, snaps, s.transport, cfg); err != nil {
		return fmt.Errorf("recovering from %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("removing %s after recovery: %w", path, err)
	}
	s.logger.Warn("replaced the Raft configuration from the recovery file", "file", path, "servers", len(cfg.Servers))
	return nil
}
