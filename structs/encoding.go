package structs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"reflect"
	"strings"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// LogCodecMaxDepth is how deeply nested a value the log codec decodes. It is the msgpack
// library's default, written down so the HTTP and RPC limits can stay below it: a limit here
// lower than what older servers accepted would make their logs undecodable.
const LogCodecMaxDepth = 1024

// LogEntryMaxSize bounds one encoded Raft entry. raft-wal refuses entries above 64 MiB and
// every follower holds a batch of them in memory, so a request far smaller than that is
// refused before it is written.
const LogEntryMaxSize = 8 << 20

// MsgpackHandle encodes Raft log entries and snapshots. Free-form maps (task config, meta)
// decode as map[string]any so they marshal to JSON unchanged.
var MsgpackHandle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.MapType = reflect.TypeOf(map[string]any(nil))
	h.MaxDepth = LogCodecMaxDepth
	return h
}()

// SchemaVersion is the version of the persisted schema: the msgpack shape of every snapshot
// row and every log entry request, including the official client's types they embed. A
// snapshot records the version it was written at; a change that an older reader or a newer
// decoder would misread (a field removed or renamed, a kind changed) bumps it and adds a
// migration from the previous version (state/migrations.go). TestPersistedSchema compares
// the schema with the one recorded for this version and fails on such a change without a
// bump. Every log entry carries the version it was written at in its raft.Log Extensions
// (EntryExtensions), so a server refuses an entry a newer release wrote.
const SchemaVersion = 1

// SnapshotSchemaTable is the table name of a snapshot stream's first record, which carries
// the stream's SchemaVersion and no row (see state.StateSnapshot.Persist).
const SnapshotSchemaTable = "_schema"

// Log entry formats. A legacy entry, written before checksums, is the message type byte and
// the msgpack request. A checksummed entry is
//
//	entryMarker | entryVersion | CRC-32C (4 bytes, big endian) of the rest | type | msgpack
//
// The marker is a value no message type may take (types stay below 0x80, a test holds them to
// it), so a reader tells the formats apart by the first byte and keeps reading old data dirs.
const (
	entryMarker     byte = 0xff
	entryVersion    byte = 1
	entryHeaderSize      = 6
	// MaxMessageType is the highest value a message type may take; the values above it are
	// reserved for entry format markers.
	MaxMessageType MessageType = 0x7f
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors a log entry can fail with. Each means the entry cannot be applied: in the log it is
// corruption, before raft.Apply it is a request that must be refused.
var (
	ErrEntryChecksum    = errors.New("log entry checksum mismatch")
	ErrEntryMalformed   = errors.New("malformed log entry")
	ErrEntryUnknownType = errors.New("unknown message type")
	ErrEntryUndecodable = errors.New("log entry does not decode")
)

// Encode writes the message type byte and then the msgpack of msg. This is the legacy entry
// format, still read from old logs; RPC bodies reuse it. New log entries use EncodeEntry.
func Encode(t MessageType, msg any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(uint8(t))
	if err := codec.NewEncoder(&buf, MsgpackHandle).Encode(msg); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", t, err)
	}
	return buf.Bytes(), nil
}

// EncodeEntry builds a checksummed Raft log entry for msg.
func EncodeEntry(t MessageType, msg any) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write([]byte{entryMarker, entryVersion, 0, 0, 0, 0, byte(t)})
	if err := codec.NewEncoder(&buf, MsgpackHandle).Encode(msg); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", t, err)
	}
	out := buf.Bytes()
	binary.BigEndian.PutUint32(out[2:entryHeaderSize], crc32.Checksum(out[entryHeaderSize:], castagnoli))
	return out, nil
}

// entryExtFormat opens the Extensions of a stamped raft.Log; a uvarint schema version
// follows. Raft hands Extensions to every FSM unread, next to Data, so the stamp reaches a
// follower exactly as the leader wrote it, without changing the Data format older releases
// read.
const entryExtFormat byte = 1

// legacyEntrySchema is the schema version of an entry without a stamp: one written before
// entries were stamped, all at version 1.
const legacyEntrySchema = 1

// ErrEntryNewerSchema is an entry written by a newer release than this binary: applying it
// could misread it, and skipping it would diverge from the servers that apply it.
var ErrEntryNewerSchema = errors.New("log entry written by a newer release")

// EntryExtensions is the raft.Log Extensions every new entry is written with: its schema
// version.
func EntryExtensions() []byte {
	return entryExtensions(SchemaVersion)
}

// EntryExtensionsAt stamps an entry with any schema version: what a newer release writes,
// for tests.
func EntryExtensionsAt(schema int) []byte {
	return entryExtensions(schema)
}

func entryExtensions(schema int) []byte {
	return binary.AppendUvarint([]byte{entryExtFormat}, uint64(schema))
}

// EntrySchemaVersion reads the schema version of an entry from its raft.Log Extensions: the
// legacy version for none, and ErrEntryNewerSchema for a version above SchemaVersion or a
// stamp format this binary does not know (only a newer release writes one).
func EntrySchemaVersion(ext []byte) (int, error) {
	return entrySchemaVersion(ext, SchemaVersion)
}

func entrySchemaVersion(ext []byte, current int) (int, error) {
	if len(ext) == 0 {
		return legacyEntrySchema, nil
	}
	// Built only on a refusal: every entry the FSM applies passes through here.
	upgrade := func() string {
		return fmt.Sprintf("this server's schema version is %d; upgrade this server to the release the other servers run", current)
	}
	if ext[0] != entryExtFormat {
		return 0, fmt.Errorf("%w: unknown schema stamp format %d; %s", ErrEntryNewerSchema, ext[0], upgrade())
	}
	v, n := binary.Uvarint(ext[1:])
	if n <= 0 || v == 0 || v > math.MaxInt32 {
		return 0, fmt.Errorf("%w: malformed schema stamp %x", ErrEntryMalformed, ext)
	}
	if int(v) > current {
		return 0, fmt.Errorf("%w: it has schema version %d; %s", ErrEntryNewerSchema, v, upgrade())
	}
	return int(v), nil
}

// Entry is a parsed log entry: its message type and msgpack payload.
type Entry struct {
	Type    MessageType
	Payload []byte
	// Checksummed is false for a legacy entry, whose damage cannot be detected.
	Checksummed bool
	// Checksum is the stored CRC-32C; zero for a legacy entry.
	Checksum uint32
}

// ParseEntry splits a log entry into type and payload, verifying the checksum when the entry
// carries one. It does not decode the payload.
func ParseEntry(data []byte) (Entry, error) {
	if len(data) == 0 {
		return Entry{}, fmt.Errorf("%w: empty", ErrEntryMalformed)
	}
	if data[0] <= byte(MaxMessageType) {
		return Entry{Type: MessageType(data[0]), Payload: data[1:]}, nil
	}
	if data[0] != entryMarker {
		return Entry{}, fmt.Errorf("%w: unknown format marker 0x%02x", ErrEntryMalformed, data[0])
	}
	if len(data) <= entryHeaderSize {
		return Entry{}, fmt.Errorf("%w: %d bytes is shorter than the entry header", ErrEntryMalformed, len(data))
	}
	if data[1] != entryVersion {
		return Entry{}, fmt.Errorf("%w: unknown entry format version %d", ErrEntryMalformed, data[1])
	}
	stored := binary.BigEndian.Uint32(data[2:entryHeaderSize])
	if got := crc32.Checksum(data[entryHeaderSize:], castagnoli); got != stored {
		return Entry{}, fmt.Errorf("%w: stored %08x, computed %08x", ErrEntryChecksum, stored, got)
	}
	return Entry{Type: MessageType(data[entryHeaderSize]), Payload: data[entryHeaderSize+1:], Checksummed: true, Checksum: stored}, nil
}

// CheckEntry does to an entry everything the FSM does before it writes: checksum, message
// type lookup and the decode into the type's request value. An entry that passes is one the
// FSM can apply; one that fails would make every server panic.
func CheckEntry(data []byte) (Entry, error) {
	e, err := ParseEntry(data)
	if err != nil {
		return e, err
	}
	info, ok := MessageTypes[e.Type]
	if !ok {
		return e, fmt.Errorf("%w %d (written by a newer version?)", ErrEntryUnknownType, e.Type)
	}
	if err := Decode(e.Payload, info.New()); err != nil {
		if strings.Contains(err.Error(), "maximum decoding depth exceeded") {
			// The codec's error is unexported: its text is the only way to tell.
			return e, fmt.Errorf("%w: %s nests deeper than the log codec allows (%d levels)", ErrEntryUndecodable, info.Name, LogCodecMaxDepth)
		}
		return e, fmt.Errorf("%w: %s: %v", ErrEntryUndecodable, info.Name, err)
	}
	return e, nil
}

// Decode reads a msgpack body into out.
func Decode(buf []byte, out any) error {
	return codec.NewDecoder(bytes.NewReader(buf), MsgpackHandle).Decode(out)
}
