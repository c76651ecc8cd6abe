package agent

import (
	"bytes"
	"encoding/json"
	"github.com/nomadfork/nomad/nomad/fsm"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/raft"
	"github.com/nomadfork/nomad/jobspec"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// acceptRegisterBody runs a register body through what the HTTP handler and the Job.Register
// RPC do before raftApply (registerJob, then Job.register's canonicalise and validate) and
// returns the job the leader would write to the log, or false where either refuses it.
func acceptRegisterBody(body []byte) (*structs.Job, bool) {
	if len(body) > maxRequestBodySize {
		return nil, false
	}
	r := httptest.NewRequest(http.MethodPut, "/v1/jobs", bytes.NewReader(body))
	var reg api.JobRegisterRequest
	if err := decodeBody(r, &reg); err != nil || reg.Job == nil {
		return nil, false
	}
	// registerJob's defaults, with the agent's default namespace and region.
	ns, region := "default", "global"
	if reg.Job.Namespace == nil || *reg.Job.Namespace == "" {
		reg.Job.Namespace = &ns
	}
	if reg.Job.Region == nil || *reg.Job.Region == "" {
		reg.Job.Region = &region
	}
	if err := canonicalizeJob(reg.Job); err != nil {
		return nil, false
	}
	job := structs.JobFromAPI(reg.Job)
	job.Canonicalize()
	if err := job.Validate(); err != nil {
		return nil, false
	}
	return job, true
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must.NoError(t, err)
	return string(b)
}

// seedJobs are real job bodies: the HTTP tests' job, the jobspec fixtures as the CLI sends
// them, and a task config nested as deep as a body may be.
func seedJobs(f testing.TB) [][]byte {
	f.Helper()
	var seeds [][]byte
	add := func(job *api.Job) {
		b, err := json.Marshal(api.JobRegisterRequest{Job: job})
		must.NoError(f, err)
		seeds = append(seeds, b)
	}
	add(testJob("web"))
	for _, path := range []string{"../../jobspec/testdata/full.nomad.hcl", "../../jobspec/testdata/example.nomad.hcl"} {
		src, err := os.ReadFile(path)
		must.NoError(f, err)
		job, err := jobspec.Parse(path, src, nil)
		must.NoError(f, err)
		if job.Periodic != nil {
			// The parse fixture exercises every block; only batch jobs may be periodic, and
			// batch jobs may not have an update block.
			job.Type = new("batch")
			job.Update = nil
			for _, tg := range job.TaskGroups {
				tg.Update = nil
			}
		}
		// The fixture's vault and connect blocks are parsed and then refused at register
		// (no Vault or Consul integration); the seed keeps the rest.
		for _, tg := range job.TaskGroups {
			for _, svc := range tg.Services {
				svc.Connect = nil
			}
			for _, task := range tg.Tasks {
				task.Vault = nil
				for _, svc := range task.Services {
					svc.Connect = nil
				}
			}
		}
		add(job)
	}
	seeds = append(seeds,
		[]byte(jobBodyWithConfig("deep", deepJSON(120))),
		[]byte(jobBodyWithConfig("list", `[1, 2.5, -3, 1e300, 18446744073709551615, "x", true, null, {"k": []}]`)),
		[]byte(jobBodyWithConfig("unicode", `"\u00e9\ud83d\ude00\u0000"`)),
		[]byte(strings.Replace(jobBodyWithConfig("batch", `{}`), `"service"`, `"batch"`, 1)),
	)
	return seeds
}

// The seeds must be jobs the endpoint accepts, or the fuzzer starts from refusals only.
func TestJobRegisterFuzzSeedsAccepted(t *testing.T) {
	for i, seed := range seedJobs(t) {
		_, ok := acceptRegisterBody(seed)
		must.True(t, ok, must.Sprintf("seed %d refused: %s", i, truncate(string(seed))))
	}
}

// FuzzJobRegisterRoundTrip checks security finding 3's invariant: any register body the
// endpoint accepts (decode, canonicalise, validate) encodes as a Raft log entry that the FSM
// decodes back to the same job and applies without panicking. A body the FSM could not
// decode would brick every server replaying the log.
func FuzzJobRegisterRoundTrip(f *testing.F) {
	for _, seed := range seedJobs(f) {
		f.Add(seed)
	}
	fsm, err := fsm.NewFSM(hclog.NewNullLogger(), state.Config{JobTrackedVersions: 2}, nil)
	must.NoError(f, err)
	var index uint64

	f.Fuzz(func(t *testing.T, body []byte) {
		job, ok := acceptRegisterBody(body)
		if !ok {
			return
		}
		req := &structs.JobRegisterRequest{Job: job}
		entry, err := structs.Encode(structs.JobRegisterRequestType, req)
		must.NoError(t, err, must.Sprint("an accepted job must encode"))

		var back structs.JobRegisterRequest
		must.NoError(t, structs.Decode(entry[1:], &back), must.Sprint("an accepted job must decode from the log"))
		must.Eq(t, jsonOf(t, req.Job), jsonOf(t, back.Job))

		index++
		res := fsm.Apply(&raft.Log{Type: raft.LogCommand, Index: index, Data: entry})
		if err, isErr := res.(error); isErr && err != nil {
			// A domain refusal (a conflict) is an answer, not a failure; a decode failure panics.
			return
		}
		stored, err := fsm.State().JobByID(nil, job.Namespace, job.ID)
		must.NoError(t, err)
		must.NotNil(t, stored)
		must.Eq(t, jsonOf(t, job.TaskGroups), jsonOf(t, stored.TaskGroups))
		must.Eq(t, jsonOf(t, job.Meta), jsonOf(t, stored.Meta))
	})
}
