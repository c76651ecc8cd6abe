package structs

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestValidateVariablePath(t *testing.T) {
	cases := []struct {
		name    string
		path    string
		wantErr string
	}{
		{name: "simple", path: "app/db"},
		{name: "all allowed characters", path: "a-Z_0~9/x"},
		{name: "workload path", path: "nomad/jobs/web/api"},
		{name: "longest", path: strings.Repeat("a", VariableMaxPathLength)},
		{name: "empty", path: "", wantErr: "invalid Path: must not be empty"},
		{name: "too long", path: strings.Repeat("a", VariableMaxPathLength+1), wantErr: "invalid Path: 129 characters"},
		{name: "dot dot", path: "app/../secret", wantErr: `character '.' is not allowed`},
		{name: "dot", path: "app/.", wantErr: `character '.' is not allowed`},
		{name: "space", path: "a b", wantErr: `character ' ' is not allowed`},
		{name: "leading slash", path: "/app", wantErr: "must not begin or end with '/'"},
		{name: "trailing slash", path: "app/", wantErr: "must not begin or end with '/'"},
		{name: "empty segment", path: "app//db", wantErr: "empty segment"},
		{name: "reserved prefix", path: "nomad/secrets", wantErr: "only nomad/jobs"},
		{name: "reserved root", path: "nomad", wantErr: "only nomad/jobs"},
		{name: "nul", path: "a\x00b", wantErr: "is not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateVariablePath(tc.path)
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, 400, ErrorCode(err))
		})
	}
}

// FuzzVariablePath checks what every accepted path keeps true: it is bounded, cannot climb
// out of its namespace, has no empty segment and is plain ASCII from the allowed set; and
// that a refusal is always a 400 naming the field.
func FuzzVariablePath(f *testing.F) {
	for _, seed := range []string{"a", "app/db", "nomad/jobs/x", "../x", "a//b", "/a", "a/", "é", strings.Repeat("x", 200)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		err := ValidateVariablePath(path)
		if err != nil {
			must.Eq(t, 400, ErrorCode(err))
			must.StrContains(t, err.Error(), "Path")
			return
		}
		must.LessEq(t, VariableMaxPathLength, len(path))
		must.Positive(t, len(path))
		must.StrNotContains(t, path, "..")
		must.StrNotContains(t, path, "//")
		must.False(t, strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/"))
		for _, seg := range strings.Split(path, "/") {
			must.NotEq(t, "", seg)
			must.NotEq(t, ".", seg)
		}
		for _, c := range []byte(path) {
			must.True(t, validVariablePathChar(c), must.Sprintf("accepted byte %q", c))
		}
	})
}

func TestVariableDecrypted_Validate(t *testing.T) {
	ok := func() *VariableDecrypted {
		return &VariableDecrypted{VariableMetadata: VariableMetadata{Namespace: "default", Path: "a"}, Items: map[string]string{"k": "v"}}
	}
	cases := []struct {
		name    string
		mutate  func(v *VariableDecrypted)
		wantErr string
	}{
		{name: "ok", mutate: func(*VariableDecrypted) {}},
		{name: "no items", mutate: func(v *VariableDecrypted) { v.Items = nil }, wantErr: "variable missing required Items object"},
		{name: "empty key", mutate: func(v *VariableDecrypted) { v.Items = map[string]string{"": "v"} }, wantErr: "invalid Items"},
		{name: "too big", mutate: func(v *VariableDecrypted) {
			v.Items = map[string]string{"k": strings.Repeat("x", VariableMaxItemsSize)}
		}, wantErr: "invalid Items"},
		{name: "wildcard namespace", mutate: func(v *VariableDecrypted) { v.Namespace = "*" }, wantErr: "invalid Namespace"},
		{name: "bad path", mutate: func(v *VariableDecrypted) { v.Path = "../x" }, wantErr: "invalid Path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := ok()
			tc.mutate(v)
			err := v.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// The lock's durations are strings on the wire (api.VariableLock) but stay durations in Raft
// entries: the JSON marshaller must not leak into the log codec.
func TestVariableLock_WireForms(t *testing.T) {
	lock := &VariableLock{ID: "l1", TTL: 15 * time.Second, LockDelay: time.Second}
	raw, err := json.Marshal(VariableMetadata{Path: "a", Lock: lock})
	must.NoError(t, err)
	must.StrContains(t, string(raw), `"Lock":{"ID":"l1","TTL":"15s","LockDelay":"1s"}`)

	req := &VarApplyStateRequest{Op: VarOpLockAcquire, Var: &VariableEncrypted{
		VariableMetadata: VariableMetadata{Namespace: "default", Path: "a", Lock: lock},
		VariableData:     VariableData{Data: []byte{1, 2, 3}, KeyID: "k"},
	}}
	buf, err := EncodeEntry(VarApplyStateRequestType, req)
	must.NoError(t, err)
	e, err := CheckEntry(buf)
	must.NoError(t, err)
	var back VarApplyStateRequest
	must.NoError(t, Decode(e.Payload, &back))
	must.Eq(t, req, &back)
}
