package agent

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/nomadfork/nomad/structs"
)

// The snapshot routes: GET answers a gzipped tar archive of the cluster state (meta.json,
// state.bin, SHA256SUMS) with its SHA-256 in the Digest header, which the official client
// checks as it reads; PUT restores one. Both need a management token.

func (s *HTTPServer) operatorSnapshotSave(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.SnapshotSaveRequest{QueryOptions: queryOptions(r)}
	var reply structs.SnapshotSaveResponse
	if err := s.rpc.RPC("Operator.SnapshotSave", &args, &reply); err != nil {
		return nil, err
	}
	h := w.Header()
	setIndex(w, reply.Index)
	h.Set("Digest", "sha-256="+reply.SHA256)
	h.Set("Content-Type", "application/x-gzip")
	h.Set("Content-Length", strconv.Itoa(len(reply.Archive)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(reply.Archive)
	return nil, nil
}

var errSnapshotTooLarge = structs.BadRequest("snapshot: the upload is larger than the limit of %d bytes", structs.MaxSnapshotSize)

// operatorSnapshotRestore reads the whole upload (up to structs.MaxSnapshotSize) and hands
// it to the server, which checks it before Raft restores it.
func (s *HTTPServer) operatorSnapshotRestore(w http.ResponseWriter, r *http.Request) (any, error) {
	// Refuse a caller before buffering what may be hundreds of megabytes.
	if err := s.authorize(writeRequest(r).AuthToken, structs.ACLAuthorizeRequest{Check: structs.ACLCheckSnapshotRestore}); err != nil {
		return nil, err
	}
	if r.ContentLength > structs.MaxSnapshotSize {
		return nil, errSnapshotTooLarge
	}
	archive, err := io.ReadAll(io.LimitReader(r.Body, structs.MaxSnapshotSize+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errSnapshotTooLarge
		}
		return nil, structs.BadRequest("snapshot: reading the upload: %v", err)
	}
	if len(archive) > structs.MaxSnapshotSize {
		return nil, errSnapshotTooLarge
	}
	args := structs.SnapshotRestoreRequest{Archive: archive, WriteRequest: writeRequest(r)}
	return s.writeForIndex(w, "Operator.SnapshotRestore", &args)
}
