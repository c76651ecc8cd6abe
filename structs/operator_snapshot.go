package structs

// SnapshotSaveRequest asks for an archive of the cluster state (raftutil's layout). With
// AllowStale any server answers from its own FSM; otherwise the leader does.
type SnapshotSaveRequest struct {
	QueryOptions
}

// SnapshotSaveResponse carries the archive, its SHA-256 (base64, for the Digest header the
// official client checks) and the Raft index it was taken at.
type SnapshotSaveResponse struct {
	Archive []byte
	SHA256  string
	Index   uint64
}

// SnapshotRestoreRequest replaces the cluster state with the archive's. The archive is
// checked whole (gzip, tar, checksums, every row decoding) before Raft restores it.
type SnapshotRestoreRequest struct {
	Archive []byte
	WriteRequest
}

// MaxSnapshotSize bounds an uploaded archive and the state it holds: the server buffers and
// checks both before restoring, so the bound is what one restore may cost in memory.
const MaxSnapshotSize = 512 << 20
