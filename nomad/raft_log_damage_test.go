package nomad

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

const victimActor = "victim-actor-zz"

// writtenDataDir runs a real server on a data dir, registers a "victim" job whose entry the
// damage tests aim at and five jobs after it (each its own write batch), and stops it. It
// returns the dir and the victim entry's index.
func writtenDataDir(t *testing.T) (string, uint64) {
	t.Helper()
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir })
	victim, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{
		Job: mock.JobWithID("victim"), Actor: &structs.Actor{Name: victimActor}})
	must.NoError(t, err)
	for _, id := range []string{"after-1", "after-2", "after-3", "after-4", "after-5"} {
		_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.JobWithID(id)})
		must.NoError(t, err)
	}
	must.NoError(t, srv.Shutdown())
	return dir, victim
}

// restart starts a server on dir again; it returns NewServer's error and registers cleanup.
func restart(t *testing.T, dir string) (*Server, error) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.FastRaft = true
	cfg.NumSchedulers = 0
	cfg.DataDir = dir
	cfg.Logger = hclog.NewNullLogger()
	srv, err := NewServer(cfg)
	if srv != nil {
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return srv, err
}

// segmentFile is the data dir's only raft-wal segment (a few writes never fill one).
func segmentFile(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(raftutil.WALDir(dir), "*.wal"))
	must.NoError(t, err)
	must.SliceLen(t, 1, files)
	return files[0]
}

// entryFrameOffset walks raft-wal's frames (32-byte file header; 8-byte frame headers of
// type, 3 reserved bytes and length; payloads padded to 8) to the frame holding index.
func entryFrameOffset(t *testing.T, raw []byte, index uint64) int64 {
	t.Helper()
	codec := &wal.BinaryCodec{}
	for off := 32; off+8 <= len(raw) && raw[off] != 0; {
		length := int(binary.LittleEndian.Uint32(raw[off+4 : off+8]))
		if raw[off] == 3 { // commit frames carry a CRC, no payload
			off += 8
			continue
		}
		if raw[off] == 1 {
			var l raft.Log
			must.NoError(t, codec.Decode(raw[off+8:off+8+length], &l))
			if l.Index == index {
				return int64(off)
			}
		}
		off += 8 + length + (8-length%8)%8
	}
	t.Fatalf("no frame for index %d", index)
	return 0
}

// Finding 7: damage to the log files of a stopped server. Before the start-up verification a
// segment cut to 0 bytes gave a server that never elected ("no known peers"), a flipped
// payload byte was applied as other data, and a damaged frame header silently dropped every
// later entry. Each must now be one error naming the file and the index, and no panic.
func TestSecurity_DamagedLogRefusesToStartNamingFileAndIndex(t *testing.T) {
	cases := []struct {
		name      string
		damage    func(t *testing.T, raw []byte, victim uint64) []byte
		wantIndex func(victim uint64) uint64
		want      string
	}{
		{
			name:      "segment truncated to 0 bytes",
			damage:    func(*testing.T, []byte, uint64) []byte { return nil },
			wantIndex: func(uint64) uint64 { return 1 },
			want:      "it was truncated",
		},
		{
			name: "byte flipped in a command entry's payload",
			damage: func(t *testing.T, raw []byte, _ uint64) []byte {
				i := bytes.Index(raw, []byte(victimActor))
				must.Positive(t, i)
				raw[i+len(victimActor)-1] = 'X'
				return raw
			},
			wantIndex: func(v uint64) uint64 { return v },
			want:      "checksum mismatch",
		},
		{
			name: "byte flipped in a frame header",
			damage: func(t *testing.T, raw []byte, victim uint64) []byte {
				raw[entryFrameOffset(t, raw, victim)] = 0x07
				return raw
			},
			wantIndex: func(v uint64) uint64 { return v },
			want:      "frame header at offset",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, victim := writtenDataDir(t)
			seg := segmentFile(t, dir)
			raw, err := os.ReadFile(seg)
			must.NoError(t, err)
			must.NoError(t, os.WriteFile(seg, tc.damage(t, raw, victim), 0o644))

			srv, err := restart(t, dir)
			must.Nil(t, srv)
			must.Error(t, err)
			var damage *raftutil.Damage
			must.True(t, errors.As(err, &damage), must.Sprintf("not a raftutil.Damage: %v", err))
			must.Eq(t, seg, damage.File)
			must.Eq(t, tc.wantIndex(victim), damage.Index)
			must.StrContains(t, err.Error(), seg)
			must.StrContains(t, err.Error(), tc.want)
			must.StrContains(t, err.Error(), "nomad operator raft logs -verify")
		})
	}
}

func TestRaftLog_IntactDataDirRestarts(t *testing.T) {
	dir, _ := writtenDataDir(t)
	srv, err := restart(t, dir)
	must.NoError(t, err)
	waitForJob(t, srv, "after-5")
}

// waitForJob polls until the restarted server has applied its log up to the job.
func waitForJob(t *testing.T, srv *Server, id string) {
	t.Helper()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		got, err := srv.State().JobByID(nil, "default", id)
		return err == nil && got != nil
	}), wait.Timeout(10*time.Second), wait.Gap(10*time.Millisecond)))
}

// Finding 7, snapshots: a damaged snapshot state file must be named. Raft verifies its CRC-64
// but, with no other snapshot, fails with "failed to load any existing snapshots" and no file.
func TestSecurity_DamagedSnapshotRefusesToStartNamingFile(t *testing.T) {
	dir := t.TempDir()
	srv := testServer(t, func(c *Config) { c.DataDir = dir })
	_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.Job()})
	must.NoError(t, err)
	must.NoError(t, srv.raft.Snapshot().Error())
	must.NoError(t, srv.Shutdown())

	states, err := filepath.Glob(filepath.Join(raftutil.RaftDir(dir), "snapshots", "*", "state.bin"))
	must.NoError(t, err)
	must.SliceLen(t, 1, states)
	raw, err := os.ReadFile(states[0])
	must.NoError(t, err)
	raw[len(raw)/2] ^= 0x01
	must.NoError(t, os.WriteFile(states[0], raw, 0o644))

	srv, err = restart(t, dir)
	must.Nil(t, srv)
	var damage *raftutil.Damage
	must.True(t, errors.As(err, &damage), must.Sprintf("not a raftutil.Damage: %v", err))
	must.Eq(t, states[0], damage.File)
	must.StrContains(t, err.Error(), "the snapshot does not verify (CRC mismatch)")
}
