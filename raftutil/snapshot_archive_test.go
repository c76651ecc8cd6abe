package raftutil

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func testState(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := codec.NewEncoder(&buf, structs.MsgpackHandle)
	for _, table := range []string{"jobs", "jobs", "nodes"} {
		must.NoError(t, enc.Encode(map[string]string{"Table": table}))
		must.NoError(t, enc.Encode(map[string]any{"ID": "x", "Payload": strings.Repeat("p", 10)}))
	}
	return buf.Bytes()
}

func TestSnapshotArchive_RoundTripAndStats(t *testing.T) {
	state := testState(t)
	meta := &raft.SnapshotMeta{ID: "3-9-1", Index: 9, Term: 3, Size: int64(len(state)), Version: 1}
	var buf bytes.Buffer
	must.NoError(t, WriteSnapshotArchive(&buf, meta, bytes.NewReader(state)))

	got, err := ReadSnapshotArchive(bytes.NewReader(buf.Bytes()), 1<<20)
	must.NoError(t, err)
	must.Eq(t, state, got.State)
	must.Eq(t, uint64(9), got.Meta.Index)
	must.Eq(t, uint64(3), got.Meta.Term)

	stats, err := SnapshotTableStats(got.State)
	must.NoError(t, err)
	must.SliceLen(t, 2, stats)
	must.Eq(t, "jobs", stats[0].Table)
	must.Eq(t, 2, stats[0].Count)
	must.Eq(t, 1, stats[1].Count)
	must.Eq(t, int64(len(state)), stats[0].Size+stats[1].Size)

	t.Run("state past the limit", func(t *testing.T) {
		_, err := ReadSnapshotArchive(bytes.NewReader(buf.Bytes()), 4)
		must.True(t, errors.Is(err, ErrSnapshotArchive))
		must.StrContains(t, err.Error(), "the limit is 4 bytes")
	})
	t.Run("every truncation is refused", func(t *testing.T) {
		full := buf.Bytes()
		for n := 0; n < len(full); n += 7 {
			_, err := ReadSnapshotArchive(bytes.NewReader(full[:n]), 1<<20)
			must.Error(t, err, must.Sprintf("archive cut at %d of %d bytes", n, len(full)))
		}
	})
	t.Run("a short state stream is refused when written", func(t *testing.T) {
		var out bytes.Buffer
		long := *meta
		long.Size = int64(len(state)) + 5
		must.Error(t, WriteSnapshotArchive(&out, &long, bytes.NewReader(state)))
	})
	t.Run("stats of a damaged stream", func(t *testing.T) {
		_, err := SnapshotTableStats(state[:len(state)-3])
		must.Error(t, err)
	})
}

func TestSnapshotSchemaVersion(t *testing.T) {
	legacy := testState(t)
	v, err := SnapshotSchemaVersion(legacy)
	must.NoError(t, err)
	must.Eq(t, 0, v, must.Sprint("a stream without the schema record predates it"))

	var buf bytes.Buffer
	must.NoError(t, codec.NewEncoder(&buf, structs.MsgpackHandle).Encode(map[string]any{"Table": structs.SnapshotSchemaTable, "Schema": 7}))
	versioned := append(buf.Bytes(), legacy...)
	v, err = SnapshotSchemaVersion(versioned)
	must.NoError(t, err)
	must.Eq(t, 7, v)

	// The record has no row: the table stats are those of the rows alone.
	stats, err := SnapshotTableStats(versioned)
	must.NoError(t, err)
	must.SliceLen(t, 2, stats)
	must.Eq(t, "jobs", stats[0].Table)
	must.Eq(t, 2, stats[0].Count)
}
