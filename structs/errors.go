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
	ErrACLDisabled       = errors.New("ACL support disabled")
	// ErrPeriodicLaunched: a periodic launch not later than the one recorded (state refuses it).
	ErrPeriodicLaunched = errors.New("periodic job already launched")
	// ErrDispatchTokenUsed: a live child of the parent was dispatched with the same token.
	ErrDispatchTokenUsed = errors.New("idempotency token already used")
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
	}
	return http.StatusInternalServerError
}
