package structs

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors. Endpoints wrap them with %w so the HTTP layer can map them to status codes
// with errors.Is/errors.As instead of matching on text.
var (
	ErrPermissionDenied   = errors.New("Permission denied")
	ErrTokenNotFound      = errors.New("ACL token not found")
	ErrTokenExpired       = errors.New("ACL token expired")
	ErrJobNotFound        = errors.New("job not found")
	ErrEvalNotFound       = errors.New("eval not found")
	ErrAllocNotFound      = errors.New("alloc not found")
	ErrNodeNotFound       = errors.New("node not found")
	ErrDeploymentNotFound = errors.New("deployment not found")
	ErrRootKeyNotFound    = errors.New("root key not found")
	// ErrJobSourceNotFound: no submission is kept for the job version asked for.
	ErrJobSourceNotFound = errors.New("job source not found")
	ErrNotFound          = errors.New("not found")
	ErrNoLeader          = errors.New("No cluster leader")
	// ErrNotLeader: the server asked stopped being the leader during the call; a forwarder
	// retries on the new one.
	ErrNotLeader   = errors.New("not the leader")
	ErrACLDisabled = errors.New("ACL support disabled")
	// ErrPeriodicLaunched: a periodic launch not later than the one recorded (state refuses it).
	ErrPeriodicLaunched = errors.New("periodic job already launched")
	// ErrDispatchTokenUsed: a live child of the parent was dispatched with the same token.
	ErrDispatchTokenUsed = errors.New("idempotency token already used")
	// ErrDiskFull: a write could not be made durable because the filesystem holding a server's
	// data_dir is (nearly) full. It crosses the wire as a 507 (Insufficient Storage).
	ErrDiskFull = errors.New("no space left on device")
	// ErrWriteOutcomeUnknown: the leader lost its leadership (or shut down) after a write
	// entered its log and before the write was committed. A newer leader may still commit
	// it, so the caller must not take the refusal for "not applied".
	ErrWriteOutcomeUnknown = errors.New("write outcome unknown")
	// ErrNotReady: this server leads but has not yet applied the log it was elected with.
	// Its store may miss acknowledged writes (or still hold a revoked token), so it refuses
	// calls that depend on it instead of answering from it or holding them. The text is
	// upstream's, which clients recognise.
	ErrNotReady = errors.New("Not ready to serve consistent reads")
	// ErrUnknownServer: a server_id names no server of the region. The text is upstream's.
	ErrUnknownServer = errors.New("unknown Nomad server")
)

// CodedError carries an HTTP status across the RPC boundary. Its message is what the client
// sees as the plain-text body.
type CodedError struct {
	Code int
	Msg  string
	// Err is the sentinel this error refines, if any, so errors.Is keeps working.
	Err error
}

func (e *CodedError) Error() string { return e.Msg }
func (e *CodedError) Unwrap() error { return e.Err }

// NewErrCode builds a coded error with a formatted message.
func NewErrCode(code int, format string, args ...any) error {
	return &CodedError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// BadRequest is a client mistake: HTTP 400.
func BadRequest(format string, args ...any) error {
	return NewErrCode(http.StatusBadRequest, format, args...)
}

// Conflict is a write that lost a check-and-set race or collides with existing state: HTTP 409.
func Conflict(format string, args ...any) error {
	return NewErrCode(http.StatusConflict, format, args...)
}

// PermissionDenied returns a 403 whose text starts with "Permission denied", as clients match
// on that prefix, followed by what was missing.
func PermissionDenied(format string, args ...any) error {
	return &CodedError{
		Code: http.StatusForbidden,
		Msg:  ErrPermissionDenied.Error() + ": " + fmt.Sprintf(format, args...),
		Err:  ErrPermissionDenied,
	}
}

// NotFound returns a 404 refining sentinel.
func NotFound(sentinel error) error {
	return &CodedError{Code: http.StatusNotFound, Msg: sentinel.Error(), Err: sentinel}
}

// DiskFull is the refusal of a write a server cannot make durable: it names the full
// filesystem's path and what is left, so the operator knows what to free.
func DiskFull(path string, free, needed uint64) error {
	return &CodedError{
		Code: http.StatusInsufficientStorage,
		Msg: fmt.Sprintf("%s: the server's data_dir filesystem at %s has %d bytes free, below the %d its Raft log needs to store a write; the write was not stored (free space on that disk; the server takes writes again by itself)",
			ErrDiskFull.Error(), path, free, needed),
		Err: ErrDiskFull,
	}
}

// NoLeader is the refusal of a call no leader can serve now: a 500 that errors.Is matches
// with ErrNoLeader, on this server and across the wire.
func NoLeader() error {
	return &CodedError{Code: http.StatusInternalServerError, Msg: ErrNoLeader.Error(), Err: ErrNoLeader}
}

// WriteOutcomeUnknown answers a write whose leader lost its leadership before the write was
// committed: a 500 that says the write may still be applied, so a client reads before it
// retries instead of writing twice (or believing a write that later lands was refused).
func WriteOutcomeUnknown() error {
	return &CodedError{Code: http.StatusInternalServerError,
		Msg: ErrWriteOutcomeUnknown.Error() + ": the leader lost its leadership before the write was committed; a new leader may still apply it (read the object before retrying)",
		Err: ErrWriteOutcomeUnknown}
}

// NotReady refuses a call reaching a leader that is still applying the log it was elected
// with: a 500 the caller retries.
func NotReady() error {
	return &CodedError{Code: http.StatusInternalServerError,
		Msg: ErrNotReady.Error() + ": this leader is still applying the log it was elected with; retry shortly",
		Err: ErrNotReady}
}

// NotLeader is the refusal of a write by a server that lost the leadership during the call.
func NotLeader() error {
	return &CodedError{Code: http.StatusInternalServerError, Msg: ErrNotLeader.Error(), Err: ErrNotLeader}
}

// errorKinds names every sentinel on the wire. An RPC answer carries the kind of its error
// beside its code and text, and the caller rebuilds the error around the same sentinel, so
// errors.Is answers alike on both sides of a forward (TestErrorKinds_EverySentinelHasAKind
// fails when a sentinel is added without a row).
var errorKinds = []struct {
	kind string
	err  error
}{
	{"permission-denied", ErrPermissionDenied},
	{"token-not-found", ErrTokenNotFound},
	{"token-expired", ErrTokenExpired},
	{"job-not-found", ErrJobNotFound},
	{"eval-not-found", ErrEvalNotFound},
	{"alloc-not-found", ErrAllocNotFound},
	{"node-not-found", ErrNodeNotFound},
	{"deployment-not-found", ErrDeploymentNotFound},
	{"root-key-not-found", ErrRootKeyNotFound},
	{"job-source-not-found", ErrJobSourceNotFound},
	{"not-found", ErrNotFound},
	{"no-leader", ErrNoLeader},
	{"not-leader", ErrNotLeader},
	{"acl-disabled", ErrACLDisabled},
	{"periodic-launched", ErrPeriodicLaunched},
	{"dispatch-token-used", ErrDispatchTokenUsed},
	{"disk-full", ErrDiskFull},
	{"write-outcome-unknown", ErrWriteOutcomeUnknown},
	{"not-ready", ErrNotReady},
	{"unknown-server", ErrUnknownServer},
}

// ErrorKind is the wire name of the first sentinel err matches, "" for none.
func ErrorKind(err error) string {
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return ""
}

// WireError rebuilds an error an RPC answer carried: its code and text as sent, and the
// sentinel its kind names (an unknown kind, from a newer peer, keeps code and text only).
func WireError(code int, kind, msg string) error {
	e := &CodedError{Code: code, Msg: msg}
	for _, k := range errorKinds {
		if k.kind == kind {
			e.Err = k.err
			break
		}
	}
	return e
}

// ErrorCode reports the HTTP status an error should produce; 500 when it carries none.
func ErrorCode(err error) int {
	var coded *CodedError
	if errors.As(err, &coded) {
		return coded.Code
	}
	switch {
	case errors.Is(err, ErrPermissionDenied), errors.Is(err, ErrTokenNotFound), errors.Is(err, ErrTokenExpired):
		return http.StatusForbidden
	case errors.Is(err, ErrJobNotFound), errors.Is(err, ErrEvalNotFound), errors.Is(err, ErrNotFound),
		errors.Is(err, ErrAllocNotFound), errors.Is(err, ErrNodeNotFound), errors.Is(err, ErrDeploymentNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrDiskFull):
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}
