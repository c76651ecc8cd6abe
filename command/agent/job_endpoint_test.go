package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// jobReadKeys are the top-level keys of GET /v1/job/:id on upstream Nomad 2.0.5, in order
// (fixtures/upstream-nomad-2.0.5/job-read.txt).
var jobReadKeys = []string{
	"Stop", "Region", "Namespace", "ID", "ParentID", "Name", "Type", "Priority", "AllAtOnce",
	"Datacenters", "NodePool", "Constraints", "Affinities", "Spreads", "TaskGroups", "Update",
	"Multiregion", "Periodic", "ParameterizedJob", "Dispatched", "DispatchIdempotencyToken",
	"Payload", "Meta", "ConsulNamespace", "VaultNamespace", "NomadTokenID", "Status",
	"StatusDescription", "Stable", "Version", "SubmitTime", "CreateIndex", "ModifyIndex",
	"JobModifyIndex", "UI", "VersionTag",
}

// topLevelKeys returns the keys of a JSON object in document order.
func topLevelKeys(t *testing.T, body string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	tok, err := dec.Token()
	must.NoError(t, err)
	must.Eq[json.Token](t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		must.NoError(t, err)
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		must.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func TestJobEndpoint_Register(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")

	resp, wm, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)
	must.NotEq(t, "", resp.EvalID)
	must.Positive(t, resp.EvalCreateIndex)
	must.Positive(t, resp.JobModifyIndex)
	must.Eq(t, resp.EvalCreateIndex, wm.LastIndex)

	t.Run("golden read shape", func(t *testing.T) {
		res := doHTTP(t, ta, "GET", "/v1/job/web", nil, nil)
		must.Eq(t, 200, res.status)
		must.Eq(t, jobReadKeys, topLevelKeys(t, res.body))
		var raw map[string]json.RawMessage
		must.NoError(t, json.Unmarshal([]byte(res.body), &raw))
		for _, key := range []string{"Constraints", "Affinities", "Spreads"} {
			must.Eq(t, "null", string(raw[key]), must.Sprintf("key %s", key))
		}
		must.Eq(t, `["dc1"]`, string(raw["Datacenters"]))
	})

	t.Run("client reads it back", func(t *testing.T) {
		job, qm, err := c.Jobs().Info("web", nil)
		must.NoError(t, err)
		must.Eq(t, "web", *job.ID)
		must.Eq(t, "default", *job.Namespace)
		must.Eq(t, "global", *job.Region)
		must.Eq(t, uint64(0), *job.Version)
		must.Eq(t, "pending", *job.Status)
		must.Eq(t, 1, *job.TaskGroups[0].Count)
		// Canonicalised by the client library's rules, as upstream's agent does.
		must.NotNil(t, job.TaskGroups[0].RestartPolicy)
		must.NotNil(t, job.Update)
		must.Positive(t, qm.LastIndex)
		must.True(t, qm.KnownLeader)
	})

	t.Run("evaluation", func(t *testing.T) {
		eval, _, err := c.Evaluations().Info(resp.EvalID, nil)
		must.NoError(t, err)
		must.Eq(t, "web", eval.JobID)
		must.Eq(t, "job-register", eval.TriggeredBy)
		evals, _, err := c.Jobs().Evaluations("web", nil)
		must.NoError(t, err)
		must.Len(t, 1, evals)
		must.Eq(t, resp.EvalID, evals[0].ID)
	})

	t.Run("register at job path", func(t *testing.T) {
		body, err := json.Marshal(&api.JobRegisterRequest{Job: testJob("api")})
		must.NoError(t, err)
		var out api.JobRegisterResponse
		_, err = c.Raw().Write("/v1/job/api", bytes.NewReader(body), &out, nil)
		must.NoError(t, err)
		must.NotEq(t, "", out.EvalID)
	})
}

func TestJobEndpoint_RegisterUpdate(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()

	job := testJob("web")
	job.Meta = map[string]string{"owner": "team-a"}
	_, _, err := jobs.Register(job, nil)
	must.NoError(t, err)

	cases := []struct {
		name        string
		owner       string
		wantVersion uint64
	}{
		{name: "spec change bumps the version", owner: "team-b", wantVersion: 1},
		{name: "identical re-register keeps it", owner: "team-b", wantVersion: 1},
		{name: "another change bumps again", owner: "team-c", wantVersion: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := testJob("web")
			job.Meta = map[string]string{"owner": tc.owner}
			_, _, err := jobs.Register(job, nil)
			must.NoError(t, err)
			got, _, err := jobs.Info("web", nil)
			must.NoError(t, err)
			must.Eq(t, tc.wantVersion, *got.Version)
			must.Eq(t, tc.owner, got.Meta["owner"])
		})
	}
}

func TestJobEndpoint_List(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, err := c.Namespaces().Register(&api.Namespace{Name: "prod"}, nil)
	must.NoError(t, err)
	for _, id := range []string{"web", "worker"} {
		_, _, err := c.Jobs().Register(testJob(id), nil)
		must.NoError(t, err)
	}
	prodJob := testJob("web-prod")
	prodJob.Namespace = new("prod")
	_, _, err = c.Jobs().Register(prodJob, nil)
	must.NoError(t, err)
	// A job without a namespace goes to the request's.
	_, _, err = c.Jobs().Register(testJob("api"), &api.WriteOptions{Namespace: "prod"})
	must.NoError(t, err)

	cases := []struct {
		name    string
		opts    *api.QueryOptions
		wantIDs []string
	}{
		{name: "default namespace", opts: nil, wantIDs: []string{"web", "worker"}},
		{name: "other namespace", opts: &api.QueryOptions{Namespace: "prod"}, wantIDs: []string{"api", "web-prod"}},
		{name: "all namespaces", opts: &api.QueryOptions{Namespace: "*"}, wantIDs: []string{"api", "web", "web-prod", "worker"}},
		{name: "prefix", opts: &api.QueryOptions{Prefix: "we"}, wantIDs: []string{"web"}},
		{name: "prefix in all namespaces", opts: &api.QueryOptions{Namespace: "*", Prefix: "web"}, wantIDs: []string{"web", "web-prod"}},
		{name: "no match", opts: &api.QueryOptions{Prefix: "zzz"}, wantIDs: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stubs, qm, err := c.Jobs().List(tc.opts)
			must.NoError(t, err)
			must.Positive(t, qm.LastIndex)
			var ids []string
			for _, s := range stubs {
				ids = append(ids, s.ID)
				must.NotNil(t, s.JobSummary)
			}
			must.Eq(t, tc.wantIDs, ids)
		})
	}

	t.Run("meta only when asked", func(t *testing.T) {
		job := testJob("meta")
		job.Meta = map[string]string{"team": "a"}
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
		stubs, _, err := c.Jobs().ListOptions(&api.JobListOptions{Fields: &api.JobListFields{Meta: true}}, &api.QueryOptions{Prefix: "meta"})
		must.NoError(t, err)
		must.Len(t, 1, stubs)
		must.Eq(t, map[string]string{"team": "a"}, stubs[0].Meta)
		stubs, _, err = c.Jobs().List(&api.QueryOptions{Prefix: "meta"})
		must.NoError(t, err)
		must.Nil(t, stubs[0].Meta)
	})
}

func TestJobEndpoint_ReadMissing(t *testing.T) {
	ta := NewTestAgent(t, nil)
	cases := []struct {
		name string
		path string
	}{
		{name: "job", path: "/v1/job/nope"},
		{name: "summary", path: "/v1/job/nope/summary"},
		{name: "versions", path: "/v1/job/nope/versions"},
		{name: "scale status", path: "/v1/job/nope/scale"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, "GET", tc.path, nil, nil)
			must.Eq(t, 404, res.status)
			must.Eq(t, "job not found", res.body)
			must.Eq(t, "text/plain; charset=utf-8", res.header.Get("Content-Type"))
		})
	}

	_, _, err := ta.Client("").Jobs().Info("nope", nil)
	status, body := responseError(t, err)
	must.Eq(t, 404, status)
	must.Eq(t, "job not found", body)
}

func TestJobEndpoint_EscapedID(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	cases := []struct {
		name       string
		id         string
		wantStatus int
	}{
		{name: "percent sign", id: "per%cent"},
		{name: "slash", id: "team/web"},
		{name: "whitespace is invalid", id: "with space", wantStatus: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := jobs.Register(testJob(tc.id), nil)
			if tc.wantStatus != 0 {
				status, _ := responseError(t, err)
				must.Eq(t, tc.wantStatus, status)
				return
			}
			must.NoError(t, err)
			got, _, err := jobs.Info(tc.id, nil)
			must.NoError(t, err)
			must.Eq(t, tc.id, *got.ID)
			versions, _, _, err := jobs.Versions(tc.id, false, nil)
			must.NoError(t, err)
			must.Len(t, 1, versions)
		})
	}
}

func TestJobEndpoint_VersionsAndDiffs(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	for _, owner := range []string{"team-a", "team-b"} {
		job := testJob("web")
		job.Meta = map[string]string{"owner": owner}
		_, _, err := jobs.Register(job, nil)
		must.NoError(t, err)
	}

	versions, diffs, qm, err := jobs.Versions("web", true, nil)
	must.NoError(t, err)
	must.Positive(t, qm.LastIndex)
	must.Len(t, 2, versions)
	must.Eq(t, uint64(1), *versions[0].Version) // newest first
	must.Len(t, 1, diffs)
	must.Eq(t, "Edited", diffs[0].Type)
	idx := slices.IndexFunc(diffs[0].Fields, func(f *api.FieldDiff) bool { return f.Name == "Meta[owner]" })
	must.NonNegative(t, idx, must.Sprintf("fields: %+v", diffs[0].Fields))
	must.Eq(t, "team-a", diffs[0].Fields[idx].Old)
	must.Eq(t, "team-b", diffs[0].Fields[idx].New)

	t.Run("no diffs unless asked", func(t *testing.T) {
		_, diffs, _, err := jobs.Versions("web", false, nil)
		must.NoError(t, err)
		must.Nil(t, diffs)
	})

	t.Run("diff against a version", func(t *testing.T) {
		_, diffs, _, err := jobs.VersionsOpts("web", &api.VersionsOptions{DiffVersion: new(uint64(0))}, nil)
		must.NoError(t, err)
		must.SliceNotEmpty(t, diffs)
	})

	t.Run("bad diff_version", func(t *testing.T) {
		res := doHTTP(t, ta, "GET", "/v1/job/web/versions?diff_version=x", nil, nil)
		must.Eq(t, 400, res.status)
	})
}

func TestJobEndpoint_Revert(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	for _, owner := range []string{"team-a", "team-b"} {
		job := testJob("web")
		job.Meta = map[string]string{"owner": owner}
		_, _, err := jobs.Register(job, nil)
		must.NoError(t, err)
	}

	t.Run("prior version mismatch", func(t *testing.T) {
		_, _, err := jobs.Revert("web", 0, new(uint64(7)), nil, "", "")
		status, body := responseError(t, err)
		must.Eq(t, 409, status)
		must.StrContains(t, body, "version")
		got, _, err := jobs.Info("web", nil)
		must.NoError(t, err)
		must.Eq(t, uint64(1), *got.Version)
	})

	t.Run("revert to version 0", func(t *testing.T) {
		resp, _, err := jobs.Revert("web", 0, new(uint64(1)), nil, "", "")
		must.NoError(t, err)
		must.NotEq(t, "", resp.EvalID)
		got, _, err := jobs.Info("web", nil)
		must.NoError(t, err)
		must.Eq(t, uint64(2), *got.Version)
		must.Eq(t, "team-a", got.Meta["owner"])
	})

	t.Run("body job ID must match", func(t *testing.T) {
		_, err := ta.Client("").Raw().Write("/v1/job/web/revert", &api.JobRevertRequest{JobID: "other"}, nil, nil)
		status, _ := responseError(t, err)
		must.Eq(t, 400, status)
	})
}

func TestJobEndpoint_Stable(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	for _, owner := range []string{"team-a", "team-b"} {
		job := testJob("web")
		job.Meta = map[string]string{"owner": owner}
		_, _, err := jobs.Register(job, nil)
		must.NoError(t, err)
	}
	stableOf := func(version uint64) bool {
		t.Helper()
		versions, _, _, err := jobs.Versions("web", false, nil)
		must.NoError(t, err)
		for _, v := range versions {
			if *v.Version == version {
				return *v.Stable
			}
		}
		t.Fatalf("no version %d", version)
		return false
	}

	for _, tc := range []struct {
		name    string
		version uint64
		stable  bool
	}{
		{name: "old version stable", version: 0, stable: true},
		{name: "current version stable", version: 1, stable: true},
		{name: "current version unstable", version: 1, stable: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, _, err := jobs.Stable("web", tc.version, tc.stable, nil)
			must.NoError(t, err)
			must.Positive(t, resp.JobModifyIndex)
			must.Eq(t, tc.stable, stableOf(tc.version))
			if tc.version == 1 {
				job, _, err := jobs.Info("web", nil)
				must.NoError(t, err)
				must.Eq(t, tc.stable, *job.Stable)
			}
		})
	}
	must.True(t, stableOf(0), must.Sprint("marking version 1 leaves version 0 alone"))

	t.Run("missing version", func(t *testing.T) {
		_, _, err := jobs.Stable("web", 9, true, nil)
		status, body := responseError(t, err)
		must.Eq(t, 404, status)
		must.StrContains(t, body, "version 9")
	})
	t.Run("missing job", func(t *testing.T) {
		_, _, err := jobs.Stable("nope", 0, true, nil)
		status, _ := responseError(t, err)
		must.Eq(t, 404, status)
	})
	t.Run("body job ID must match", func(t *testing.T) {
		_, err := ta.Client("").Raw().Write("/v1/job/web/stable", &api.JobStabilityRequest{JobID: "other"}, nil, nil)
		status, _ := responseError(t, err)
		must.Eq(t, 400, status)
	})
}

func TestJobEndpoint_Tags(t *testing.T) {
	ta := NewTestAgent(t, nil) // job_tracked_versions is 6 by default
	jobs := ta.Client("").Jobs()
	register := func(owner string) {
		t.Helper()
		job := testJob("web")
		job.Meta = map[string]string{"owner": owner}
		_, _, err := jobs.Register(job, nil)
		must.NoError(t, err)
	}
	versionNumbers := func() []uint64 {
		t.Helper()
		versions, _, _, err := jobs.Versions("web", false, nil)
		must.NoError(t, err)
		var out []uint64
		for _, v := range versions {
			out = append(out, *v.Version)
		}
		return out
	}

	register("v0")
	t.Run("apply", func(t *testing.T) {
		var out struct {
			Name        string
			Description string
			TaggedTime  int64
			Index       uint64
		}
		_, err := ta.Client("").Raw().Write("/v1/job/web/versions/golden/tag",
			&api.TagVersionRequest{Version: 0, Description: "known good"}, &out, nil)
		must.NoError(t, err)
		must.Eq(t, "golden", out.Name)
		must.Eq(t, "known good", out.Description)
		must.Positive(t, out.TaggedTime)
		must.Positive(t, out.Index)
		v, _, err := jobs.VersionByTag("web", "golden", nil)
		must.NoError(t, err)
		must.Eq(t, uint64(0), *v.Version)
	})

	t.Run("tagged version survives pruning", func(t *testing.T) {
		for i := 1; i <= 8; i++ {
			register(fmt.Sprintf("v%d", i))
		}
		// Six untagged versions are kept, plus the tagged one, which does not count.
		must.Eq(t, []uint64{8, 7, 6, 5, 4, 3, 0}, versionNumbers())
	})

	t.Run("tag the latest version when none is named", func(t *testing.T) {
		_, err := ta.Client("").Raw().Write("/v1/job/web/versions/newest/tag",
			strings.NewReader(`{"Description":"latest"}`), nil, nil)
		must.NoError(t, err)
		v, _, err := jobs.VersionByTag("web", "newest", nil)
		must.NoError(t, err)
		must.Eq(t, uint64(8), *v.Version)
		_, err = jobs.UntagVersion("web", "newest", nil)
		must.NoError(t, err)
	})

	t.Run("unset", func(t *testing.T) {
		_, err := jobs.UntagVersion("web", "golden", nil)
		must.NoError(t, err)
		_, _, err = jobs.VersionByTag("web", "golden", nil)
		must.Error(t, err)
		// Untagged, version 0 is over the limit and is pruned.
		must.Eq(t, []uint64{8, 7, 6, 5, 4, 3}, versionNumbers())
	})

	t.Run("unset unknown tag", func(t *testing.T) {
		_, err := jobs.UntagVersion("web", "nope", nil)
		status, _ := responseError(t, err)
		must.Eq(t, 404, status)
	})
}

func TestJobEndpoint_Scale(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	_, _, err := jobs.Register(testJob("web"), nil)
	must.NoError(t, err)

	cases := []struct {
		name  string
		count int
	}{
		{name: "up", count: 3},
		{name: "to zero keeps the job", count: 0},
		{name: "back up", count: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, _, err := jobs.Scale("web", "web", new(tc.count), "test", false, nil, nil)
			must.NoError(t, err)
			must.NotEq(t, "", resp.EvalID)
			job, _, err := jobs.Info("web", nil)
			must.NoError(t, err)
			must.Eq(t, tc.count, *job.TaskGroups[0].Count)
			must.False(t, *job.Stop)
			status, qm, err := jobs.ScaleStatus("web", nil)
			must.NoError(t, err)
			must.Positive(t, qm.LastIndex)
			must.Eq(t, tc.count, status.TaskGroups["web"].Desired)
			must.False(t, status.JobStopped)
		})
	}

	t.Run("unknown group", func(t *testing.T) {
		_, _, err := jobs.Scale("web", "nope", new(1), "test", false, nil, nil)
		status, _ := responseError(t, err)
		must.Eq(t, 400, status)
	})

	t.Run("count with error", func(t *testing.T) {
		_, _, err := jobs.Scale("web", "web", new(1), "bad", true, nil, nil)
		status, _ := responseError(t, err)
		must.Eq(t, 400, status)
	})

	// Events are kept newest first: the three count changes above, then an error and a
	// message that change no count, make no evaluation and leave the job's modify index.
	t.Run("events", func(t *testing.T) {
		before, _, err := jobs.Info("web", nil)
		must.NoError(t, err)
		for _, tc := range []struct {
			msg     string
			isError bool
		}{{"it broke", true}, {"just saying", false}} {
			resp, wm, err := jobs.Scale("web", "web", nil, tc.msg, tc.isError, map[string]any{"k": "v"}, nil)
			must.NoError(t, err)
			must.Eq(t, "", resp.EvalID)
			must.Zero(t, resp.EvalCreateIndex)
			must.Eq(t, *before.JobModifyIndex, resp.JobModifyIndex)
			must.Positive(t, wm.LastIndex)
		}
		status, _, err := jobs.ScaleStatus("web", nil)
		must.NoError(t, err)
		events := status.TaskGroups["web"].Events
		must.Len(t, 5, events)
		must.Eq(t, "just saying", events[0].Message)
		must.False(t, events[0].Error)
		must.Nil(t, events[0].EvalID)
		must.Nil(t, events[0].Count)
		must.Eq(t, map[string]any{"k": "v"}, events[0].Meta)
		must.True(t, events[1].Error)
		must.Eq(t, int64(2), *events[2].Count)
		must.Eq(t, int64(0), events[2].PreviousCount)
		must.NotNil(t, events[2].EvalID)
		must.Positive(t, events[2].Time)
	})
}

func TestJobEndpoint_StopAndPurge(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	_, _, err := jobs.Register(testJob("web"), nil)
	must.NoError(t, err)

	t.Run("stop keeps the job readable", func(t *testing.T) {
		evalID, wm, err := jobs.Deregister("web", false, nil)
		must.NoError(t, err)
		must.NotEq(t, "", evalID)
		must.Positive(t, wm.LastIndex)
		job, _, err := jobs.Info("web", nil)
		must.NoError(t, err)
		must.True(t, *job.Stop)
		must.Eq(t, "dead", *job.Status)
		eval, _, err := ta.Client("").Evaluations().Info(evalID, nil)
		must.NoError(t, err)
		must.Eq(t, "job-deregister", eval.TriggeredBy)
	})

	t.Run("purge removes it", func(t *testing.T) {
		_, _, err := jobs.DeregisterOpts("web", &api.DeregisterOptions{Purge: true, EvalPriority: 70}, nil)
		must.NoError(t, err)
		_, _, err = jobs.Info("web", nil)
		status, body := responseError(t, err)
		must.Eq(t, 404, status)
		must.Eq(t, "job not found", body)
	})

	// As upstream: 200 with no evaluation and index 0, and nothing written.
	t.Run("stop of a missing job", func(t *testing.T) {
		before := ta.Server().State().LatestIndex()
		evalID, wm, err := jobs.Deregister("web", false, nil)
		must.NoError(t, err)
		must.Eq(t, "", evalID)
		must.Eq(t, uint64(0), wm.LastIndex)
		must.Eq(t, before, ta.Server().State().LatestIndex())
	})

	// A purge that removed nothing must not look like one that did: a 404 (upstream: 200).
	t.Run("purge of a missing job", func(t *testing.T) {
		before := ta.Server().State().LatestIndex()
		_, _, err := jobs.Deregister("web", true, nil)
		status, body := responseError(t, err)
		must.Eq(t, 404, status)
		must.Eq(t, "job not found", body)
		must.Eq(t, before, ta.Server().State().LatestIndex())
	})
}

func TestJobEndpoint_BlockingRead(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	_, _, err := jobs.Register(testJob("web"), nil)
	must.NoError(t, err)
	_, qm, err := jobs.Info("web", nil)
	must.NoError(t, err)
	start := qm.LastIndex

	type result struct {
		job *api.Job
		qm  *api.QueryMeta
		err error
	}
	resCh := make(chan result, 1)
	go func() {
		job, qm, err := jobs.Info("web", &api.QueryOptions{WaitIndex: start, WaitTime: 30 * time.Second})
		resCh <- result{job, qm, err}
	}()

	// Nothing changed yet, so the read must still be waiting.
	select {
	case res := <-resCh:
		t.Fatalf("blocking read returned before any change: index %d, err %v", res.qm.LastIndex, res.err)
	case <-time.After(200 * time.Millisecond):
	}

	job := testJob("web")
	job.Meta = map[string]string{"changed": "yes"}
	_, _, err = jobs.Register(job, nil)
	must.NoError(t, err)

	select {
	case res := <-resCh:
		must.NoError(t, res.err)
		must.Greater(t, start, res.qm.LastIndex)
		must.Eq(t, "yes", res.job.Meta["changed"])
		qm = res.qm
	case <-time.After(10 * time.Second):
		t.Fatal("blocking read did not wake up after the job changed")
	}

	t.Run("times out with the same index", func(t *testing.T) {
		_, qm2, err := jobs.Info("web", &api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 50 * time.Millisecond})
		must.NoError(t, err)
		must.Eq(t, qm.LastIndex, qm2.LastIndex)
	})
}

func TestJobEndpoint_Placeholders(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	resp, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	cases := []struct {
		name     string
		path     string
		wantBody string
	}{
		{name: "job allocations", path: "/v1/job/web/allocations", wantBody: "[]"},
		{name: "job deployment", path: "/v1/job/web/deployment", wantBody: "null"},
		{name: "job deployments", path: "/v1/job/web/deployments", wantBody: "[]"},
		{name: "eval allocations", path: "/v1/evaluation/" + resp.EvalID + "/allocations", wantBody: "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, "GET", tc.path, nil, nil)
			must.Eq(t, 200, res.status, must.Sprint(res.body))
			must.Eq(t, tc.wantBody, res.body)
			must.NotEq(t, "", res.header.Get("X-Nomad-Index"))
		})
	}

	allocs, _, err := c.Jobs().Allocations("web", true, nil)
	must.NoError(t, err)
	must.SliceEmpty(t, allocs)
	d, _, err := c.Jobs().LatestDeployment("web", nil)
	must.NoError(t, err)
	must.Nil(t, d)
	summary, _, err := c.Jobs().Summary("web", nil)
	must.NoError(t, err)
	must.MapContainsKey(t, summary.Summary, "web")
}

func TestJobEndpoint_Parse(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	const spec = `
variable "count" {
  type    = number
  default = 1
}
job "p" {
  group "g" {
    count = var.count
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}`

	t.Run("canonicalized", func(t *testing.T) {
		job, err := jobs.ParseHCL(spec, true)
		must.NoError(t, err)
		must.Eq(t, "p", *job.ID)
		must.Eq(t, "default", *job.Namespace)
		must.Eq(t, 1, *job.TaskGroups[0].Count)
		must.NotNil(t, job.TaskGroups[0].RestartPolicy)
	})

	t.Run("as written", func(t *testing.T) {
		job, err := jobs.ParseHCL(spec, false)
		must.NoError(t, err)
		must.Nil(t, job.Namespace)
	})

	t.Run("variables", func(t *testing.T) {
		job, err := jobs.ParseHCLOpts(&api.JobsParseRequest{JobHCL: spec, Variables: "count = 3\n"})
		must.NoError(t, err)
		must.Eq(t, 3, *job.TaskGroups[0].Count)
	})

	t.Run("invalid", func(t *testing.T) {
		_, err := jobs.ParseHCL(`job "p" { group`, true)
		status, body := responseError(t, err)
		must.Eq(t, 400, status)
		// As upstream: the diagnostic names input.hcl and the position.
		must.StrHasPrefix(t, "Failed to parse job: input.hcl:1,11-16: Argument or block definition required", body)
	})

	// The agent parses for an API caller: file() would read the agent's disk, not the
	// caller's, so it is refused with a message saying where it works (issue 30).
	t.Run("filesystem functions refused", func(t *testing.T) {
		_, err := jobs.ParseHCL(`job "p" {
  meta { v = file("/etc/hostname") }
}`, true)
		status, body := responseError(t, err)
		must.Eq(t, 400, status)
		must.StrContains(t, body, "reads the filesystem, which is only allowed when the CLI parses a job file")
		must.StrNotContains(t, body, "There is no function named")
	})
}

// TestJobEndpoint_BadInputChangesNothing sends every kind of bad write and checks that each
// is refused with its status and that the state index and the job list stay as they were.
func TestJobEndpoint_BadInputChangesNothing(t *testing.T) {
	ta := NewTestAgent(t, nil)
	c := ta.Client("")
	_, _, err := c.Jobs().Register(testJob("web"), nil)
	must.NoError(t, err)

	// snapshot is what a bad request must not change: the index GET /v1/jobs reports, the
	// job list, and (stricter) the highest index of any table.
	snapshot := func() (uint64, string) {
		t.Helper()
		stubs, qm, err := c.Jobs().List(&api.QueryOptions{Namespace: "*"})
		must.NoError(t, err)
		var b strings.Builder
		for _, s := range stubs {
			fmt.Fprintf(&b, "%s/%s@%d;", s.Namespace, s.ID, s.ModifyIndex)
		}
		fmt.Fprintf(&b, "latest=%d", ta.Server().State().LatestIndex())
		return qm.LastIndex, b.String()
	}
	negCount := `{"Job":{"ID":"x","Type":"service","Datacenters":["dc1"],"TaskGroups":[{"Name":"g","Count":-1,` +
		`"Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true"}}]}]}}`
	negCountWeb := strings.Replace(strings.Replace(negCount, `"ID":"x"`, `"ID":"web"`, 1), `"Name":"g"`, `"Name":"web"`, 1)
	huge := `{"Job":{"ID":"huge","Meta":{"pad":"` + strings.Repeat("x", 11<<20) + `"}}}`

	cases := []struct {
		name       string
		method     string
		path       string
		body       string
		wantStatus int
		wantBody   string
	}{
		{name: "malformed JSON", method: "PUT", path: "/v1/jobs", body: "{", wantStatus: 400, wantBody: "unexpected EOF"},
		{name: "wrong JSON type", method: "PUT", path: "/v1/jobs", body: `{"Job":{"ID":5}}`, wantStatus: 400, wantBody: "cannot unmarshal"},
		{name: "empty body", method: "PUT", path: "/v1/jobs", body: "", wantStatus: 400, wantBody: "Request body is empty"},
		{name: "no job", method: "PUT", path: "/v1/jobs", body: "{}", wantStatus: 400, wantBody: "Job must be specified"},
		{name: "unknown job type", method: "PUT", path: "/v1/jobs", body: `{"Job":{"ID":"x","Type":"nonsense","TaskGroups":[]}}`,
			wantStatus: 400, wantBody: `Invalid job type: "nonsense"`},
		{name: "missing ID", method: "PUT", path: "/v1/jobs", body: `{"Job":{"ID":""}}`, wantStatus: 400, wantBody: "Missing job ID"},
		{name: "null group", method: "PUT", path: "/v1/jobs", body: `{"Job":{"ID":"x","TaskGroups":[null]}}`, wantStatus: 400, wantBody: "null"},
		{name: "negative count", method: "PUT", path: "/v1/jobs", body: negCount, wantStatus: 400,
			wantBody: `group "g": count must not be negative`},
		{name: "negative count on existing job", method: "PUT", path: "/v1/job/web", body: negCountWeb, wantStatus: 400,
			wantBody: `group "web": count must not be negative`},
		{name: "path and body IDs differ", method: "PUT", path: "/v1/job/other", body: `{"Job":{"ID":"web"}}`,
			wantStatus: 400, wantBody: "Job ID does not match name"},
		{name: "body over 10 MiB", method: "PUT", path: "/v1/jobs", body: huge, wantStatus: 413, wantBody: "Request body too large"},
		{name: "wrong method", method: "PATCH", path: "/v1/job/web", body: "", wantStatus: 405, wantBody: "Invalid method"},
		{name: "invalid purge flag", method: "DELETE", path: "/v1/job/web?purge=maybe", wantStatus: 400, wantBody: `"purge"`},
		{name: "invalid eval priority", method: "DELETE", path: "/v1/job/web?eval_priority=high", wantStatus: 400, wantBody: `"eval_priority"`},
		{name: "eval priority out of range", method: "DELETE", path: "/v1/job/web?eval_priority=500", wantStatus: 400, wantBody: "eval priority"},
		{name: "negative scale", method: "PUT", path: "/v1/job/web/scale", body: `{"Count":-1,"Target":{"Group":"web"},"Message":"x"}`,
			wantStatus: 400, wantBody: "negative"},
		{name: "scale without group", method: "PUT", path: "/v1/job/web/scale", body: `{"Count":1,"Message":"x"}`, wantStatus: 400},
		{name: "scale of another job", method: "PUT", path: "/v1/job/web/scale", body: `{"Count":1,"Target":{"Job":"x","Group":"web"},"Message":"x"}`,
			wantStatus: 400},
		{name: "revert to current version", method: "PUT", path: "/v1/job/web/revert", body: `{"JobID":"web","JobVersion":0}`, wantStatus: 400},
		{name: "tag unknown version", method: "PUT", path: "/v1/job/web/versions/t/tag", body: `{"Version":9}`, wantStatus: 404},
		{name: "bad tag name", method: "PUT", path: "/v1/job/web/versions/a%20b/tag", body: `{}`, wantStatus: 400},
		{name: "tag body malformed", method: "PUT", path: "/v1/job/web/versions/t/tag", body: `{"Version":"one"}`, wantStatus: 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			beforeIndex, beforeJobs := snapshot()
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			res := doHTTP(t, ta, tc.method, tc.path, body, nil)
			must.Eq(t, tc.wantStatus, res.status, must.Sprint(truncate(res.body)))
			must.StrContains(t, res.body, tc.wantBody)
			must.Eq(t, "text/plain; charset=utf-8", res.header.Get("Content-Type"))
			afterIndex, afterJobs := snapshot()
			must.Eq(t, beforeIndex, afterIndex)
			must.Eq(t, beforeJobs, afterJobs)
		})
	}

	t.Run("through the official client", func(t *testing.T) {
		job := testJob("neg")
		job.TaskGroups[0].Count = new(-1)
		_, _, err := c.Jobs().Register(job, nil)
		status, body := responseError(t, err)
		must.Eq(t, http.StatusBadRequest, status)
		must.StrContains(t, body, `group "web": count must not be negative`)
	})
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "…(" + strconv.Itoa(len(s)) + " bytes)"
	}
	return s
}

func TestJobEndpoint_Statuses(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	for _, id := range []string{"first", "second", "third"} {
		job := testJob(id)
		job.TaskGroups[0].Count = new(2)
		_, _, err := c.Jobs().Register(job, nil)
		must.NoError(t, err)
	}
	allocsIn(t, c, "second", map[string]int{"running": 2})

	var all []structs.JobStatusesJob
	_, err := c.Raw().Query("/v1/jobs/statuses", &all, nil)
	must.NoError(t, err)
	must.SliceLen(t, 3, all)
	// Most recently modified first.
	for i := 1; i < len(all); i++ {
		must.Greater(t, all[i].ModifyIndex, all[i-1].ModifyIndex)
	}
	var second structs.JobStatusesJob
	for _, j := range all {
		if j.ID == "second" {
			second = j
		}
	}
	must.Eq(t, 2, second.GroupCountSum)
	must.Eq(t, "service", second.Type)
	must.SliceLen(t, 2, second.Allocs)
	for _, a := range second.Allocs {
		must.Eq(t, "web", a.Group)
	}
	must.NotNil(t, second.LatestDeployment)

	t.Run("pages", func(t *testing.T) {
		var page []structs.JobStatusesJob
		qm, err := c.Raw().Query("/v1/jobs/statuses", &page, &api.QueryOptions{PerPage: 2})
		must.NoError(t, err)
		must.SliceLen(t, 2, page)
		must.NotEq(t, "", qm.NextToken)
		var rest []structs.JobStatusesJob
		qm, err = c.Raw().Query("/v1/jobs/statuses", &rest, &api.QueryOptions{PerPage: 2, NextToken: qm.NextToken})
		must.NoError(t, err)
		must.SliceLen(t, 1, rest)
		must.Eq(t, all[2].ID, rest[0].ID)
		must.Eq(t, "", qm.NextToken)
	})
	t.Run("named jobs", func(t *testing.T) {
		var named []structs.JobStatusesJob
		_, err := c.Raw().Write("/v1/jobs/statuses", map[string]any{"Jobs": []map[string]string{{"ID": "third", "Namespace": "default"}}}, &named, nil)
		must.NoError(t, err)
		must.SliceLen(t, 1, named)
		must.Eq(t, "third", named[0].ID)
	})
	t.Run("filter", func(t *testing.T) {
		var filtered []structs.JobStatusesJob
		_, err := c.Raw().Query("/v1/jobs/statuses", &filtered, &api.QueryOptions{Filter: `ID == "first"`})
		must.NoError(t, err)
		must.SliceLen(t, 1, filtered)
		res := doHTTP(t, ta, "GET", "/v1/jobs/statuses?filter="+url.QueryEscape(`ID ==`), nil, nil)
		must.Eq(t, 400, res.status)
	})
}
