package nomad

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// deepConfig nests a value levels maps deep, past what the log codec decodes when levels is
// above structs.LogCodecMaxDepth.
func deepConfig(levels int) map[string]any {
	v := any("leaf")
	for range levels {
		v = map[string]any{"k": v}
	}
	return map[string]any{"nested": v}
}

// Finding 3: an entry the FSM cannot decode must never reach raft.Apply, or every server
// panics on it at every start. Before the leader's round trip this register was applied and
// the FSM panicked.
func TestSecurity_RaftApplyRefusesEntriesTheFSMCannotDecode(t *testing.T) {
	srv := testServer(t, nil)

	deep := mock.Job()
	deep.TaskGroups[0].Tasks[0].Config = deepConfig(structs.LogCodecMaxDepth + 10)
	huge := mock.JobWithID("huge")
	huge.Meta = map[string]string{"blob": strings.Repeat("x", structs.LogEntryMaxSize)}

	cases := []struct {
		name string
		job  *structs.Job
		want string
	}{
		{name: "too deep", job: deep, want: "nests deeper than the log codec allows (1024 levels)"},
		{name: "too large", job: huge, want: "above the log entry limit of 8388608 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.raft.LastIndex()
			_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: tc.job})
			must.Error(t, err)
			must.Eq(t, 400, structs.ErrorCode(err))
			must.StrContains(t, err.Error(), "request cannot be stored")
			must.StrContains(t, err.Error(), tc.want)
			must.Eq(t, before, srv.raft.LastIndex(), must.Sprint("a refused entry was written to the log"))
		})
	}

	// The server is still up and writes: nothing poisoned its FSM.
	_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mock.Job()})
	must.NoError(t, err)
	got, err := srv.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.NotNil(t, got)
	must.Eq(t, 400, structs.ErrorCode(func() error {
		_, err := srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: deep})
		return err
	}()))
}

// Finding 3, the log side of the end-to-end fuzz: whatever JSON a task config holds, the
// leader's check and the FSM agree. An entry encodeEntry accepts must apply without a panic;
// one it refuses must be a 400. (Run: go test -run '^$' -fuzz FuzzSecurity_ ./nomad/)
func FuzzSecurity_AcceptedLogEntriesApply(f *testing.F) {
	f.Add(`{"command":"/bin/sleep","args":["1"]}`)
	f.Add(strings.Repeat(`{"k":`, structs.LogCodecMaxDepth+10) + `1` + strings.Repeat(`}`, structs.LogCodecMaxDepth+10))
	f.Add(`{"a":` + strings.Repeat(`[`, structs.LogCodecMaxDepth-3) + strings.Repeat(`]`, structs.LogCodecMaxDepth-3) + `}`)
	f.Add(`{"a":` + strings.Repeat(`[`, structs.LogCodecMaxDepth) + strings.Repeat(`]`, structs.LogCodecMaxDepth) + `}`)
	srv := &Server{}
	f.Fuzz(func(t *testing.T, raw string) {
		var cfg map[string]any
		if json.Unmarshal([]byte(raw), &cfg) != nil {
			return
		}
		job := mock.Job()
		job.TaskGroups[0].Tasks[0].Config = cfg
		buf, err := srv.encodeEntry(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
		if err != nil {
			must.Eq(t, 400, structs.ErrorCode(err), must.Sprint(err))
			return
		}
		must.Nil(t, testFSM(t).Apply(&raft.Log{Index: 7, Type: raft.LogCommand, Data: buf}))
	})
}
