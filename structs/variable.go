package structs

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Variables are small maps of secrets stored per namespace and path. The items are encrypted
// by the leader with a key derived from the active root key before they enter Raft, so the
// log, snapshots and the state store hold ciphertext only; every server can decrypt because
// every server holds the root keys. Events and list answers carry VariableMetadata, never
// items.

// VariableMaxPathLength is the longest variable path accepted.
const VariableMaxPathLength = 128

// VariableMaxItemsSize bounds the encoded items of one variable (upstream's limit).
const VariableMaxItemsSize = 64 * 1024

// Lock defaults, as upstream's: a lock expires unless renewed within TTL.
const (
	VariableLockDefaultTTL   = 15 * time.Second
	VariableLockDefaultDelay = 15 * time.Second
	VariableLockMinTTL       = 10 * time.Second
	VariableLockMaxTTL       = 24 * time.Hour
)

// VariableMetadata is a variable without its items: what lists and events show.
type VariableMetadata struct {
	Namespace   string
	Path        string
	Lock        *VariableLock `json:",omitempty"`
	CreateIndex uint64
	CreateTime  int64 // Unix nanoseconds, set by the leader
	ModifyIndex uint64
	ModifyTime  int64
}

// VariableLock is the lock held on a variable. The ID is the holder's proof of ownership.
type VariableLock struct {
	ID        string
	TTL       time.Duration
	LockDelay time.Duration
}

// VariableData is the encrypted items of a variable and the root key that encrypted them.
type VariableData struct {
	Data  []byte // nonce followed by AES-GCM ciphertext
	KeyID string
}

// VariableEncrypted is the stored row.
type VariableEncrypted struct {
	VariableMetadata
	VariableData
}

// VariableDecrypted is a variable with its items in clear, which exists only on servers and
// in API answers to callers that may read it.
type VariableDecrypted struct {
	VariableMetadata
	Items map[string]string
}

// Copy returns a deep copy of the metadata.
func (m VariableMetadata) Copy() VariableMetadata {
	if m.Lock != nil {
		l := *m.Lock
		m.Lock = &l
	}
	return m
}

// LockID is the ID of the variable's lock, "" when unlocked.
func (m *VariableMetadata) LockID() string {
	if m == nil || m.Lock == nil {
		return ""
	}
	return m.Lock.ID
}

// ValidateVariablePath checks a variable path: 1 to VariableMaxPathLength characters from
// [a-zA-Z0-9-_~/], no empty segment (so no leading, trailing or doubled slash). The field is
// named in the error so a caller knows what to fix. Upstream's character set excludes '.',
// so no path can hold a ".." segment.
func ValidateVariablePath(path string) error {
	if path == "" {
		return BadRequest("invalid Path: must not be empty")
	}
	if len(path) > VariableMaxPathLength {
		return BadRequest("invalid Path: %d characters, the limit is %d", len(path), VariableMaxPathLength)
	}
	for i := 0; i < len(path); i++ {
		if !validVariablePathChar(path[i]) {
			return BadRequest("invalid Path %q: character %q is not allowed (allowed: a-z A-Z 0-9 - _ ~ /)", path, path[i])
		}
	}
	if strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.Contains(path, "//") {
		return BadRequest("invalid Path %q: must not begin or end with '/' or contain an empty segment", path)
	}
	// "nomad/" is reserved for paths workloads are given (nomad/jobs/...).
	if path == "nomad" || (strings.HasPrefix(path, "nomad/") && path != "nomad/jobs" && !strings.HasPrefix(path, "nomad/jobs/")) {
		return BadRequest("invalid Path %q: only nomad/jobs and paths below it may start with nomad/", path)
	}
	return nil
}

func validVariablePathChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '-', c == '_', c == '~', c == '/':
		return true
	}
	return false
}

// Validate checks a variable a caller wants written.
func (v *VariableDecrypted) Validate() error {
	if v.Namespace == AllNamespacesSentinel {
		return BadRequest("invalid Namespace: a variable cannot be written to the wildcard namespace")
	}
	if err := ValidateVariablePath(v.Path); err != nil {
		return err
	}
	if len(v.Items) == 0 {
		return BadRequest("variable missing required Items object")
	}
	size := 0
	for k, val := range v.Items {
		if k == "" {
			return BadRequest("invalid Items: a key must not be empty")
		}
		size += len(k) + len(val)
	}
	if size > VariableMaxItemsSize {
		return BadRequest("invalid Items: %d bytes, the limit is %d", size, VariableMaxItemsSize)
	}
	return nil
}

// VarOp is what a variable write does.
type VarOp string

// Variable write operations, named as upstream names them.
const (
	VarOpSet         VarOp = "set"
	VarOpCAS         VarOp = "cas"
	VarOpDelete      VarOp = "delete"
	VarOpDeleteCAS   VarOp = "delete-cas"
	VarOpLockAcquire VarOp = "lock-acquire"
	VarOpLockRelease VarOp = "lock-release"
)

// Valid reports whether op is one the FSM applies.
func (op VarOp) Valid() bool {
	switch op {
	case VarOpSet, VarOpCAS, VarOpDelete, VarOpDeleteCAS, VarOpLockAcquire, VarOpLockRelease:
		return true
	}
	return false
}

// VariablesApplyRequest is a caller's write: items in clear. It never enters Raft.
type VariablesApplyRequest struct {
	Op  VarOp
	Var *VariableDecrypted
	WriteRequest
}

// VariablesApplyResponse answers VariablesApplyRequest. Conflict is set when a check-and-set
// or a lock check failed: the variable as it is (items only for a caller that may read it).
type VariablesApplyResponse struct {
	Op       VarOp
	Output   *VariableDecrypted
	Conflict *VariableDecrypted
	WriteMeta
}

// VarApplyStateRequest is the Raft entry of a variable write: the items already encrypted
// and every time and lock ID fixed by the leader.
type VarApplyStateRequest struct {
	Op    VarOp
	Var   *VariableEncrypted
	Actor *Actor
	WriteRequest
}

// VarApplyStateResponse is what the FSM returns for a VarApplyStateRequest: the row as
// written, or, on a failed check, the row that made it fail.
type VarApplyStateResponse struct {
	Written  *VariableEncrypted
	Conflict *VariableEncrypted
}

// VariablesReadRequest reads one variable.
type VariablesReadRequest struct {
	Path string
	QueryOptions
}

// VariablesReadResponse answers VariablesReadRequest; Data is nil when there is none.
type VariablesReadResponse struct {
	Data *VariableDecrypted
	QueryMeta
}

// VariablesListRequest lists variable metadata; Prefix filters by path.
type VariablesListRequest struct {
	QueryOptions
}

// VariablesListResponse answers VariablesListRequest.
type VariablesListResponse struct {
	Data []*VariableMetadata
	QueryMeta
}

// VariablesRenewLockRequest extends a held lock. It writes nothing: the lock's expiry is the
// leader's in-memory timer.
type VariablesRenewLockRequest struct {
	Path   string
	LockID string
	WriteRequest
}

// VariablesRenewLockResponse answers VariablesRenewLockRequest.
type VariablesRenewLockResponse struct {
	VarMeta *VariableMetadata
	WriteMeta
}

// VariableEvent is the payload of events on TopicVariables: metadata only, never items.
type VariableEvent struct {
	Variable *VariableMetadata
}

// Event types of TopicVariables. The upsert type is the message type's (MessageTypes); the
// converter names the delete.
const (
	TypeVariableUpserted = "VariableUpserted"
	TypeVariableDeleted  = "VariableDeleted"
)

// ErrVariableNotFound is upstream's text for a missing variable.
var ErrVariableNotFound = errors.New("variable not found")

// MarshalJSON writes the durations as Go duration strings ("15s"), the wire form of
// api.VariableLock.
func (l *VariableLock) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID        string
		TTL       string
		LockDelay string
	}{ID: l.ID, TTL: l.TTL.String(), LockDelay: l.LockDelay.String()})
}
