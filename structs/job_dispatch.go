package structs

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Parameterized job payload modes (parameterized { payload = ... }).
const (
	DispatchPayloadOptional  = "optional"
	DispatchPayloadRequired  = "required"
	DispatchPayloadForbidden = "forbidden"
)

// DispatchPayloadSizeLimit is the largest payload a dispatch may carry, as upstream: it
// travels in the Raft log and in every allocation of the child.
const DispatchPayloadSizeLimit = 16 * 1024

// Bounds of the other dispatch inputs, so one request cannot grow the log without limit.
const (
	maxDispatchMetaKeys       = 64
	maxDispatchMetaValue      = 1024
	maxDispatchIDPrefix       = 64
	maxDispatchIdempotencyLen = 256
)

// JobDispatchRequest creates a child of a parameterized job.
type JobDispatchRequest struct {
	JobID            string
	Payload          []byte
	Meta             map[string]string
	IdPrefixTemplate string
	Priority         int
	IdempotencyToken string
	WriteRequest
}

// JobDispatchResponse names the dispatched child and its evaluation, as upstream.
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	WriteMeta
}

// ValidateDispatch checks a dispatch against its parameterized parent: the payload against
// payload mode and size, the meta keys against meta_required and meta_optional. Each message
// names the field or key, and the limit.
func ValidateDispatch(parent *Job, req *JobDispatchRequest) error {
	cfg := parent.ParameterizedJob
	if cfg == nil || parent.Dispatched {
		return BadRequest("Specified job is not a parameterized job")
	}
	if parent.Stop {
		return BadRequest("Specified job is stopped")
	}
	mode := cfg.Payload
	if mode == "" {
		mode = DispatchPayloadOptional
	}
	switch {
	case len(req.Payload) > DispatchPayloadSizeLimit:
		return BadRequest("Payload exceeds maximum size; %d > %d", len(req.Payload), DispatchPayloadSizeLimit)
	case mode == DispatchPayloadRequired && len(req.Payload) == 0:
		return BadRequest("Payload is not provided but required by parameterized job")
	case mode == DispatchPayloadForbidden && len(req.Payload) != 0:
		return BadRequest("Payload provided but forbidden by parameterized job")
	}
	if len(req.Meta) > maxDispatchMetaKeys {
		return BadRequest("Meta: at most %d keys may be given, got %d", maxDispatchMetaKeys, len(req.Meta))
	}
	var unpermitted []string
	for k, v := range req.Meta {
		if len(v) > maxDispatchMetaValue {
			return BadRequest("Meta %q: value must be at most %d bytes, got %d", k, maxDispatchMetaValue, len(v))
		}
		if !slices.Contains(cfg.MetaRequired, k) && !slices.Contains(cfg.MetaOptional, k) {
			unpermitted = append(unpermitted, k)
		}
	}
	if len(unpermitted) > 0 {
		sort.Strings(unpermitted)
		return BadRequest("Dispatch request included unpermitted metadata keys: %s", quoteList(unpermitted))
	}
	var missing []string
	for _, k := range cfg.MetaRequired {
		if _, ok := req.Meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return BadRequest("Dispatch did not provide required meta keys: %s", quoteList(missing))
	}
	if len(req.IdPrefixTemplate) > maxDispatchIDPrefix {
		return BadRequest("IdPrefixTemplate must be at most %d characters, got %d", maxDispatchIDPrefix, len(req.IdPrefixTemplate))
	}
	if strings.ContainsAny(req.IdPrefixTemplate, "/\x00") {
		return BadRequest("IdPrefixTemplate must not contain %q or NUL", "/")
	}
	if req.Priority != 0 && (req.Priority < JobMinPriority || req.Priority > JobMaxPriority) {
		return BadRequest("Priority must be between [%d, %d], got %d", JobMinPriority, JobMaxPriority, req.Priority)
	}
	if len(req.IdempotencyToken) > maxDispatchIdempotencyLen {
		return BadRequest("idempotency_token must be at most %d characters, got %d", maxDispatchIdempotencyLen, len(req.IdempotencyToken))
	}
	return nil
}

// DispatchedID is the ID of a dispatched child: "<parent>/dispatch-[<prefix>-]<unix>-<suffix>"
// where suffix is eight random hex digits the leader chose.
func DispatchedID(parentID, prefix string, unix int64, suffix string) string {
	if prefix != "" {
		return fmt.Sprintf("%s%s%s-%d-%s", parentID, DispatchLaunchSuffix, prefix, unix, suffix)
	}
	return fmt.Sprintf("%s%s%d-%s", parentID, DispatchLaunchSuffix, unix, suffix)
}

func quoteList(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(q, ", ")
}
