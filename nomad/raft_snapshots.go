package nomad

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// snapshotStore is raft's file snapshot store, cleaning up after a snapshot that could not
// start or finish. Raft's store removes a snapshot that fails while being written (Cancel),
// but not one whose meta.json it could not write at creation or at Close (a full disk), nor
// one it could not rename into place: each leaves a ".tmp" directory as large as the
// snapshot, per attempt, and raft retries every couple of minutes while the disk stays full
// (a follower retries installing the leader's snapshot too). The previous snapshots are never
// touched either way: a new one only replaces them once complete.
type snapshotStore struct {
	*raft.FileSnapshotStore
	dir    string // <raft dir>/snapshots
	logger hclog.Logger
}

func newSnapshotStore(raftDir string, retain int, logger hclog.Logger) (*snapshotStore, error) {
	fss, err := raft.NewFileSnapshotStoreWithLogger(raftDir, retain, logger)
	if err != nil {
		return nil, err
	}
	s := &snapshotStore{FileSnapshotStore: fss, dir: filepath.Join(raftDir, "snapshots"), logger: logger}
	// No snapshot is in progress before Raft starts: any temporary directory is a leftover.
	s.removeTemporary(nil)
	return s, nil
}

func (s *snapshotStore) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	before := s.temporary()
	sink, err := s.FileSnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		s.removeTemporary(before)
		return nil, err
	}
	return &cleanupSink{SnapshotSink: sink, tmp: filepath.Join(s.dir, sink.ID()+".tmp"), logger: s.logger}, nil
}

// cleanupSink removes its temporary directory when Close fails. Once Close has renamed the
// directory into place the temporary path no longer exists, so a later failure (syncing the
// parent directory, reaping old snapshots) leaves the finished snapshot alone.
type cleanupSink struct {
	raft.SnapshotSink
	tmp    string
	logger hclog.Logger
}

func (c *cleanupSink) Close() error {
	err := c.SnapshotSink.Close()
	if err != nil {
		if rmErr := os.RemoveAll(c.tmp); rmErr != nil {
			c.logger.Warn("could not remove an unfinished snapshot", "path", c.tmp, "error", rmErr)
		}
	}
	return err
}

func (s *snapshotStore) temporary() map[string]bool {
	out := map[string]bool{}
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if e.IsDir() && strings.HasSuffix(e.Name(), ".tmp") {
			out[e.Name()] = true
		}
	}
	return out
}

// removeTemporary removes the temporary directories not in keep.
func (s *snapshotStore) removeTemporary(keep map[string]bool) {
	for name := range s.temporary() {
		if keep[name] {
			continue
		}
		path := filepath.Join(s.dir, name)
		if err := os.RemoveAll(path); err != nil {
			s.logger.Warn("could not remove an unfinished snapshot", "path", path, "error", err)
		}
	}
}
