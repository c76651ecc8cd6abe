package raftutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft-wal/types"
	"github.com/shoenig/test/must"
)

func TestAppliedRecord_OnlyMovesForwardAndSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), AppliedFileName)
	r, err := OpenAppliedRecord(path)
	must.NoError(t, err)
	must.Eq(t, uint64(0), r.Index())

	r.Advance(5)
	got, err := ReadApplied(path)
	must.NoError(t, err)
	must.Eq(t, uint64(5), got, must.Sprint("an advance is visible without a sync (it lives in the page cache)"))
	r.Advance(3)
	must.Eq(t, uint64(5), r.Index())
	must.NoError(t, r.Close())
	r.Advance(9) // after Close: ignored, not a panic

	r, err = OpenAppliedRecord(path)
	must.NoError(t, err)
	must.Eq(t, uint64(5), r.Index())
	must.NoError(t, r.Close())
}

func TestAppliedRecord_ReadingOddFiles(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		content []byte
		want    uint64
		wantErr bool
	}{
		{name: "missing", content: nil, want: 0},
		{name: "empty (first write never reached the disk)", content: []byte{}, want: 0},
		{name: "short", content: []byte{1, 2, 3}, wantErr: true},
		{name: "flipped bit", content: func() []byte { b := encodeApplied(42); b[6] ^= 1; return b[:] }(), wantErr: true},
		{name: "intact", content: func() []byte { b := encodeApplied(42); return b[:] }(), want: 42},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if tc.content != nil {
				must.NoError(t, os.WriteFile(path, tc.content, 0o600))
			}
			got, err := ReadApplied(path)
			if tc.wantErr {
				must.True(t, errors.Is(err, ErrAppliedRecord))
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

func TestCheckApplied_NamesTheLostRange(t *testing.T) {
	segs := []types.SegmentInfo{{ID: 1, BaseIndex: 1, MinIndex: 1}, {ID: 2, BaseIndex: 133, MinIndex: 133}}
	must.NoError(t, CheckApplied("/wal", segs, 335, 0, 335, "/rec"))
	must.NoError(t, CheckApplied("/wal", segs, 100, 400, 335, "/rec"), must.Sprint("a snapshot covers what the log lost"))

	err := CheckApplied("/wal", segs, 132, 0, 335, "/rec")
	var d *Damage
	must.True(t, errors.As(err, &d))
	must.Eq(t, segmentPath("/wal", segs[1]), d.File)
	must.Eq(t, uint64(133), d.Index)
	must.Eq(t, uint64(335), d.Through)
	must.StrContains(t, err.Error(), "entries 133 to 335 are lost")
}
