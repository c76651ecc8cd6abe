package nomad

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Snapshot save and restore: the operator's backup of the whole cluster state, behind a
// management token as upstream's. The archive travels whole in one RPC so a follower can
// forward either call to the leader; structs.MaxSnapshotSize bounds it.

// operatorSnapshotSave takes a Raft snapshot of the FSM and answers it as an archive.
var operatorSnapshotSave = read("Operator.SnapshotSave", spec[structs.SnapshotSaveRequest, structs.SnapshotSaveResponse]{
	Authorize: management[structs.SnapshotSaveRequest]("save a snapshot"),
	Serve: func(c *rpcCall, _ *structs.SnapshotSaveRequest, reply *structs.SnapshotSaveResponse) error {
		future := c.srv.raft.Snapshot()
		if err := future.Error(); err != nil {
			return err
		}
		meta, rc, err := future.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		if meta.Size > structs.MaxSnapshotSize {
			return structs.NewErrCode(500, "snapshot of %d bytes is past the limit of %d bytes", meta.Size, structs.MaxSnapshotSize)
		}
		var buf bytes.Buffer
		if err := raftutil.WriteSnapshotArchive(&buf, meta, rc); err != nil {
			return err
		}
		sum := sha256.Sum256(buf.Bytes())
		reply.Archive = buf.Bytes()
		reply.SHA256 = base64.StdEncoding.EncodeToString(sum[:])
		reply.Index = meta.Index
		return nil
	},
})

// operatorSnapshotRestore replaces the cluster state with an archive's through Raft's user
// restore, which installs it on the leader and ships it to the followers. Everything that can
// be checked is checked first (the archive's framing and checksums, and every row decoding
// into this binary's tables), so a refused archive leaves Raft and the state untouched. The
// checks are in Serve and not Validate: decoding the state needs the server's configuration,
// and an archive of up to structs.MaxSnapshotSize is read once.
var operatorSnapshotRestore = write("Operator.SnapshotRestore", spec[structs.SnapshotRestoreRequest, structs.GenericResponse]{
	Authorize: management[structs.SnapshotRestoreRequest]("restore a snapshot"),
	Serve: func(c *rpcCall, req *structs.SnapshotRestoreRequest, reply *structs.GenericResponse) error {
		if len(req.Archive) == 0 {
			return structs.BadRequest("snapshot: the request body is empty; send a snapshot archive")
		}
		arch, err := raftutil.ReadSnapshotArchive(bytes.NewReader(req.Archive), structs.MaxSnapshotSize)
		if err != nil {
			return structs.BadRequest("snapshot: %v", err)
		}
		if v := arch.Meta.Version; v < raft.SnapshotVersionMin || v > raft.SnapshotVersionMax {
			return structs.BadRequest("snapshot: version %d is not one this server reads (%d to %d)", v, raft.SnapshotVersionMin, raft.SnapshotVersionMax)
		}
		if _, err := state.Restore(state.Config{JobTrackedVersions: c.srv.config.JobTrackedVersions}, bytes.NewReader(arch.State)); err != nil {
			return structs.BadRequest("snapshot: state does not decode: %v", err)
		}
		if err := c.srv.raft.Restore(&arch.Meta, bytes.NewReader(arch.State), raftApplyTimeout); err != nil {
			if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
				return structs.NotLeader()
			}
			return err
		}
		reply.Index = c.srv.raft.AppliedIndex()
		c.srv.rearmAfterRestore()
		return nil
	},
})

// SnapshotSave takes a Raft snapshot of the FSM and answers it as an archive.
func (o *Operator) SnapshotSave(args *structs.SnapshotSaveRequest, reply *structs.SnapshotSaveResponse) error {
	return operatorSnapshotSave.Call(o.srv, args, reply)
}

// SnapshotRestore replaces the cluster state with an archive's.
func (o *Operator) SnapshotRestore(args *structs.SnapshotRestoreRequest, reply *structs.GenericResponse) error {
	return operatorSnapshotRestore.Call(o.srv, args, reply)
}

// rearmAfterRestore gives the leader's in-memory duties the restored state: every node not
// down gets a full heartbeat TTL (the restored state's nodes have no timers here, and one
// that is gone must still be marked down), pending evaluations go to the broker, and
// variable lock timers are armed again. The periodic dispatcher, the drainer and the
// deployment watcher read the state on each change and need nothing.
func (s *Server) rearmAfterRestore() {
	store := s.State()
	nodes, err := store.Nodes(nil, "")
	if err != nil {
		s.logger.Error("reading restored nodes failed", "error", err)
	}
	s.heartbeats.mu.Lock()
	clear(s.heartbeats.deadlines)
	s.heartbeats.mu.Unlock()
	for _, n := range nodes {
		if n.Status != structs.NodeStatusDown {
			s.resetHeartbeat(n.ID)
		}
	}
	if s.evalBroker.Enabled() {
		if err := s.evalFeed.Enable(); err != nil {
			s.logger.Error("filling the evaluation broker from the restored state failed", "error", err)
		}
	}
	if err := s.armVariableLocks(); err != nil {
		s.logger.Error("arming variable lock timers after a restore failed", "error", err)
	}
}
