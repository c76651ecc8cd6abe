package agent

import (
	"math"
	"net/http"
	"time"

	"github.com/nomadfork/nomad/structs"
)

// maxUnixNanoTime is the latest time whose UnixNano is defined.
var maxUnixNanoTime = time.Unix(0, math.MaxInt64)

func (s *HTTPServer) purgeRecordList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.PurgeRecordListRequest{QueryOptions: queryOptions(r)}
	if raw := r.URL.Query().Get("since"); raw != "" {
		since, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			return nil, structs.BadRequest("invalid since %q: must be an RFC 3339 time such as 2026-12-01T00:00:00Z", raw)
		}
		// UnixNano is undefined outside 1678–2262: clamp, so a far future keeps nothing and a
		// far past keeps everything instead of wrapping around.
		switch {
		case since.After(maxUnixNanoTime):
			args.Since = math.MaxInt64
		case since.Before(time.Unix(0, 0)):
			args.Since = 0
		default:
			args.Since = since.UnixNano()
		}
	}
	return read(s, w, "PurgeHistory.List", &args, func(reply *structs.PurgeRecordListResponse) (any, error) {
		return nonNil(reply.Records), nil
	})
}

func (s *HTTPServer) purgeRecordRead(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.PurgeRecordSpecificRequest{ID: r.PathValue("id"), QueryOptions: queryOptions(r)}
	return read(s, w, "PurgeHistory.GetRecord", &args, func(reply *structs.SinglePurgeRecordResponse) (any, error) {
		return reply.Record, nil
	})
}

func (s *HTTPServer) purgeRecordRestore(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.PurgeRecordRestoreRequest{ID: r.PathValue("id"), WriteRequest: writeRequest(r)}
	return writeQueryIndexed(s, w, "PurgeHistory.Restore", &args, wholeReply[structs.JobRegisterResponse])
}

// purgeChainVerify answers {"Valid", "Records", "Head"}, with the first record that breaks the
// chain when it does not verify.
func (s *HTTPServer) purgeChainVerify(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.PurgeChainVerifyRequest{QueryOptions: queryOptions(r)}
	return read(s, w, "PurgeHistory.Verify", &args, func(reply *structs.PurgeChainVerifyResponse) (any, error) {
		return &purgeChainVerifyView{Valid: reply.Valid, Records: reply.Records, Head: reply.Head,
			Checkpoint: reply.Checkpoint, Unchained: reply.Unchained, Broken: reply.Broken}, nil
	})
}

// purgeChainVerifyView is the answer of GET /v1/jobs/purged/verify, without query metadata
// (which goes in headers).
type purgeChainVerifyView struct {
	Valid      bool
	Records    int
	Head       string
	Checkpoint string                   `json:",omitempty"`
	Unchained  int                      `json:",omitempty"`
	Broken     *structs.PurgeChainBreak `json:",omitempty"`
}
