package agent

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/raftutil"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// saveSnapshot saves a snapshot through the official client, which checks the Digest header
// as it reads.
func saveSnapshot(t *testing.T, c *api.Client) []byte {
	t.Helper()
	rc, err := c.Operator().Snapshot(nil)
	must.NoError(t, err)
	defer rc.Close()
	archive, err := io.ReadAll(rc)
	must.NoError(t, err)
	return archive
}

// TestOperatorSnapshot_RestoreIntoFreshCluster saves server A's state (a job, a variable, a
// policy and tokens) and restores it into a fresh server B, which then serves A's objects
// and honours A's tokens.
func TestOperatorSnapshot_RestoreIntoFreshCluster(t *testing.T) {
	a, rootA := NewTestACLAgent(t, nil)
	ca := a.Client(rootA)
	_, _, err := ca.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	_, _, err = ca.Variables().Create(&api.Variable{Path: "app/config", Items: api.VariableItems{"db": "postgres"}}, nil)
	must.NoError(t, err)
	mustUpsertPolicy(t, ca, "readers", `namespace "default" { policy = "read" }`)
	reader := mustCreateToken(t, ca, "reader", "readers")

	// The headers upstream sends: the Raft index and the archive's SHA-256.
	res := doHTTP(t, a, "GET", "/v1/operator/snapshot", nil, tokenHeader(rootA))
	must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
	must.NotEq(t, "", res.header.Get("X-Nomad-Index"))
	sum := sha256.Sum256([]byte(res.body))
	must.Eq(t, "sha-256="+base64.StdEncoding.EncodeToString(sum[:]), res.header.Get("Digest"))

	archive := saveSnapshot(t, ca)
	parsed, err := raftutil.ReadSnapshotArchive(bytes.NewReader(archive), structs.MaxSnapshotSize)
	must.NoError(t, err)
	must.Positive(t, parsed.Meta.Index)
	stats, err := raftutil.SnapshotTableStats(parsed.State)
	must.NoError(t, err)
	counts := map[string]int{}
	for _, st := range stats {
		counts[st.Table] = st.Count
	}
	must.Eq(t, 1, counts["jobs"], must.Sprintf("%v", counts))

	b, rootB := NewTestACLAgent(t, nil)
	cb := b.Client(rootB)
	_, err = cb.Operator().SnapshotRestore(bytes.NewReader(archive), nil)
	must.NoError(t, err)

	// B now holds A's state: A's root token works, B's own is gone.
	cbA := b.Client(rootA)
	job, _, err := cbA.Jobs().Info("web", nil)
	must.NoError(t, err)
	must.Eq(t, "web", *job.ID)
	v, _, err := cbA.Variables().Read("app/config", nil)
	must.NoError(t, err)
	must.Eq(t, "postgres", v.Items["db"])
	_, _, err = b.Client(reader.SecretID).Jobs().Info("web", nil)
	must.NoError(t, err)
	_, _, err = cb.Jobs().List(nil)
	status, _ := responseError(t, err)
	must.Eq(t, http.StatusForbidden, status)

	// And B goes on taking writes on top of the restored state.
	_, _, err = cbA.Jobs().Register(testJob("api"), nil)
	must.NoError(t, err)
	jobs, _, err := cbA.Jobs().List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 2, jobs)
}

// buildArchive writes a tar.gz of the given files in order, for hand-made damaged archives.
func buildArchive(t *testing.T, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		must.NoError(t, tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o600, Size: int64(len(f[1])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(f[1]))
		must.NoError(t, err)
	}
	must.NoError(t, tw.Close())
	must.NoError(t, gz.Close())
	return buf.Bytes()
}

func sumsFor(files ...[2]string) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256([]byte(f[1])), f[0])
	}
	return b.String()
}

// TestOperatorSnapshot_BadUploads: a damaged, truncated, forged or oversized upload is a 400
// that names what is wrong, and the state does not change.
func TestOperatorSnapshot_BadUploads(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	c := ta.Client(root)
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	good := saveSnapshot(t, c)
	parsed, err := raftutil.ReadSnapshotArchive(bytes.NewReader(good), structs.MaxSnapshotSize)
	must.NoError(t, err)

	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff

	metaJSON := fmt.Sprintf(`{"ID":"x","Index":%d,"Term":%d,"Size":%d,"Version":1}`,
		parsed.Meta.Index, parsed.Meta.Term, len(parsed.State))
	meta := [2]string{"meta.json", metaJSON}
	state := [2]string{"state.bin", string(parsed.State)}

	var garbage bytes.Buffer
	must.NoError(t, raftutil.WriteSnapshotArchive(&garbage,
		&raft.SnapshotMeta{ID: "x", Index: 10, Term: 1, Size: 5, Version: 1}, strings.NewReader("\xc1\xc1\xc1\xc1\xc1")))

	cases := []struct {
		name     string
		body     []byte
		wantBody string
	}{
		{name: "empty", body: nil, wantBody: "request body is empty"},
		{name: "not gzip", body: []byte("hello, this is not a snapshot"), wantBody: "not gzip data"},
		{name: "truncated", body: good[:len(good)/2], wantBody: "invalid snapshot archive"},
		{name: "damaged", body: flipped, wantBody: "invalid snapshot archive"},
		{name: "no checksums", body: buildArchive(t, meta, state), wantBody: "SHA256SUMS is missing"},
		{name: "checksum mismatch", body: buildArchive(t, meta, state,
			[2]string{"SHA256SUMS", sumsFor(meta, [2]string{"state.bin", "other"})}), wantBody: "state.bin does not match its SHA-256 checksum"},
		{name: "unexpected file", body: buildArchive(t, meta, state, [2]string{"evil", "x"}), wantBody: `unexpected file "evil"`},
		{name: "state that does not decode", body: garbage.Bytes(), wantBody: "state does not decode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := ta.Server().State()
			before := tableIndexes(t, store)
			res := doHTTP(t, ta, "PUT", "/v1/operator/snapshot", bytes.NewReader(tc.body), tokenHeader(root))
			must.Eq(t, http.StatusBadRequest, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantBody)
			must.Eq(t, before, tableIndexes(t, ta.Server().State()))
			_, _, err := c.Jobs().Info("web", nil)
			must.NoError(t, err)
		})
	}

	t.Run("oversized", func(t *testing.T) {
		before := tableIndexes(t, ta.Server().State())
		conn, err := net.Dial("tcp", ta.Agent.HTTPAddr())
		must.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "PUT /v1/operator/snapshot HTTP/1.1\r\nHost: x\r\nX-Nomad-Token: %s\r\nContent-Length: %d\r\n\r\nabc",
			root, structs.MaxSnapshotSize+1)
		must.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		must.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		must.Eq(t, http.StatusBadRequest, resp.StatusCode)
		must.StrContains(t, string(body), fmt.Sprintf("limit of %d bytes", structs.MaxSnapshotSize))
		must.Eq(t, before, tableIndexes(t, ta.Server().State()))
	})

	t.Run("refused before the upload is read", func(t *testing.T) {
		conn, err := net.Dial("tcp", ta.Agent.HTTPAddr())
		must.NoError(t, err)
		defer conn.Close()
		_, err = fmt.Fprintf(conn, "PUT /v1/operator/snapshot HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\nabc",
			structs.MaxSnapshotSize)
		must.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		must.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		must.Eq(t, http.StatusForbidden, resp.StatusCode)
		must.StrHasPrefix(t, "Permission denied", string(body))
	})

	t.Run("wrong method", func(t *testing.T) {
		res := doHTTP(t, ta, "DELETE", "/v1/operator/snapshot", nil, tokenHeader(root))
		must.Eq(t, http.StatusMethodNotAllowed, res.status)
	})
}
