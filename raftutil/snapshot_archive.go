package raftutil

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/structs"
)

// A snapshot archive is what `GET /v1/operator/snapshot` answers and `PUT` takes back, in the
// layout upstream uses so operators' backup tooling keeps working: a gzipped tar holding
//
//	meta.json   the Raft snapshot metadata (ID, Index, Term, Size, Version, Configuration)
//	state.bin   the FSM's snapshot stream, exactly as Raft's snapshot store holds it
//	SHA256SUMS  one "<hex sha256>  <name>" line for each of the two files above
//
// ReadSnapshotArchive checks every piece (gzip framing, tar entries, both hashes, the size
// meta.json announces) before anything is restored, so a damaged or truncated upload is
// refused whole.

const (
	archiveMeta  = "meta.json"
	archiveState = "state.bin"
	archiveSums  = "SHA256SUMS"
)

// ErrSnapshotArchive marks an archive that is not a well-formed snapshot: callers map it to a
// 400.
var ErrSnapshotArchive = errors.New("invalid snapshot archive")

func archiveErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshotArchive, fmt.Sprintf(format, args...))
}

// WriteSnapshotArchive writes meta and the meta.Size bytes of state as an archive to w.
func WriteSnapshotArchive(w io.Writer, meta *raft.SnapshotMeta, state io.Reader) error {
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	now := time.Unix(0, 0).UTC()
	sums := map[string][]byte{}

	put := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: now, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(tw, h), r)
		if err != nil {
			return err
		}
		if n != size {
			return fmt.Errorf("snapshot %s: wrote %d bytes, want %d", name, n, size)
		}
		sums[name] = h.Sum(nil)
		return nil
	}
	if err := put(archiveMeta, int64(len(metaJSON)), bytes.NewReader(metaJSON)); err != nil {
		return err
	}
	if err := put(archiveState, meta.Size, io.LimitReader(state, meta.Size)); err != nil {
		return err
	}
	var list bytes.Buffer
	for _, name := range []string{archiveMeta, archiveState} {
		fmt.Fprintf(&list, "%s  %s\n", hex.EncodeToString(sums[name]), name)
	}
	if err := put(archiveSums, int64(list.Len()), &list); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// SnapshotArchive is a verified archive: its metadata and the FSM stream.
type SnapshotArchive struct {
	Meta  raft.SnapshotMeta
	State []byte
}

// ReadSnapshotArchive reads and verifies an archive. maxState bounds the FSM stream (and so
// how much the reader may buffer); an archive past it is refused, naming the limit.
func ReadSnapshotArchive(r io.Reader, maxState int64) (*SnapshotArchive, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, archiveErr("not gzip data: %v", err)
	}
	tr := tar.NewReader(gz)
	var metaJSON, state, sums []byte
	seen := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, archiveErr("reading the tar stream: %v", err)
		}
		if seen[hdr.Name] {
			return nil, archiveErr("%s appears twice", hdr.Name)
		}
		seen[hdr.Name] = true
		var limit int64
		switch hdr.Name {
		case archiveMeta, archiveSums:
			limit = 1 << 20
		case archiveState:
			limit = maxState
		default:
			return nil, archiveErr("unexpected file %q", hdr.Name)
		}
		if hdr.Size > limit {
			return nil, archiveErr("%s is %d bytes; the limit is %d bytes", hdr.Name, hdr.Size, limit)
		}
		buf, err := io.ReadAll(io.LimitReader(tr, limit+1))
		if err != nil {
			return nil, archiveErr("reading %s: %v", hdr.Name, err)
		}
		if int64(len(buf)) != hdr.Size {
			return nil, archiveErr("%s is truncated", hdr.Name)
		}
		switch hdr.Name {
		case archiveMeta:
			metaJSON = buf
		case archiveState:
			state = buf
		case archiveSums:
			sums = buf
		}
	}
	// The gzip trailer carries a CRC of everything: reading to its end checks it.
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return nil, archiveErr("gzip stream: %v", err)
	}
	for _, name := range []string{archiveMeta, archiveState, archiveSums} {
		if !seen[name] {
			return nil, archiveErr("%s is missing", name)
		}
	}
	want, err := parseSums(sums)
	if err != nil {
		return nil, err
	}
	for name, content := range map[string][]byte{archiveMeta: metaJSON, archiveState: state} {
		got := sha256.Sum256(content)
		w, ok := want[name]
		if !ok {
			return nil, archiveErr("%s has no checksum in %s", name, archiveSums)
		}
		if !bytes.Equal(got[:], w) {
			return nil, archiveErr("%s does not match its SHA-256 checksum", name)
		}
	}
	out := &SnapshotArchive{State: state}
	if err := json.Unmarshal(metaJSON, &out.Meta); err != nil {
		return nil, archiveErr("%s: %v", archiveMeta, err)
	}
	if out.Meta.Size != int64(len(state)) {
		return nil, archiveErr("%s says %d bytes of state, %s holds %d", archiveMeta, out.Meta.Size, archiveState, len(state))
	}
	if out.Meta.Index == 0 || out.Meta.Term == 0 {
		return nil, archiveErr("%s: index and term must be set", archiveMeta)
	}
	return out, nil
}

func parseSums(raw []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return nil, archiveErr("%s: malformed line %q", archiveSums, line)
		}
		b, err := hex.DecodeString(sum)
		if err != nil || len(b) != sha256.Size {
			return nil, archiveErr("%s: malformed checksum for %s", archiveSums, name)
		}
		out[strings.TrimPrefix(name, "*")] = b
	}
	return out, nil
}

// TableStat is how many rows of one table a snapshot holds and their encoded size.
type TableStat struct {
	Table string
	Count int
	Size  int64
}

// SnapshotSchemaVersion is the structs.SchemaVersion an FSM stream was written at: the
// version its first record carries, or 0 for a stream written before the record existed.
func SnapshotSchemaVersion(state []byte) (int, error) {
	var hdr struct {
		Table  string
		Schema int
	}
	if len(state) == 0 {
		return 0, nil
	}
	if err := codec.NewDecoderBytes(state, structs.MsgpackHandle).Decode(&hdr); err != nil {
		return 0, archiveErr("state header: %v", err)
	}
	if hdr.Table != structs.SnapshotSchemaTable {
		return 0, nil
	}
	return hdr.Schema, nil
}

// SnapshotTableStats walks the FSM stream (a table header then its row, repeated: the layout
// state.StateSnapshot.Persist writes) and counts rows per table, biggest first.
func SnapshotTableStats(state []byte) ([]TableStat, error) {
	dec := codec.NewDecoderBytes(state, structs.MsgpackHandle)
	byTable := map[string]*TableStat{}
	for first := true; dec.NumBytesRead() < len(state); first = false {
		start := dec.NumBytesRead()
		var hdr struct{ Table string }
		if err := dec.Decode(&hdr); err != nil {
			return nil, archiveErr("state header: %v", err)
		}
		if first && hdr.Table == structs.SnapshotSchemaTable {
			continue // the schema record has no row
		}
		var row any
		if err := dec.Decode(&row); err != nil {
			return nil, archiveErr("state row of %s: %v", hdr.Table, err)
		}
		st := byTable[hdr.Table]
		if st == nil {
			st = &TableStat{Table: hdr.Table}
			byTable[hdr.Table] = st
		}
		st.Count++
		st.Size += int64(dec.NumBytesRead() - start)
	}
	out := make([]TableStat, 0, len(byTable))
	for _, st := range byTable {
		out = append(out, *st)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Size != out[j].Size {
			return out[i].Size > out[j].Size
		}
		return out[i].Table < out[j].Table
	})
	return out, nil
}
