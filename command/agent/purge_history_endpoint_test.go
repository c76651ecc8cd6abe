package agent

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// purgeRecordListKeys are the keys of one entry of GET /v1/jobs/purged, in order: the record
// without its job spec.
var purgeRecordListKeys = []string{
	"ID", "Namespace", "JobID", "JobVersion", "JobType", "Reason", "Actor", "PurgeTime", "CreateIndex", "ModifyIndex",
}

// purgeRecord is a purge-history record as a client decodes it.
type purgeRecord struct {
	ID          string
	Namespace   string
	JobID       string
	JobVersion  uint64
	JobType     string
	Reason      string
	Actor       map[string]string
	PurgeTime   int64
	CreateIndex uint64
	Job         *api.Job
}

// listPurged lists records through the official client's Raw API.
func listPurged(t *testing.T, c *api.Client, q *api.QueryOptions) ([]purgeRecord, *api.QueryMeta) {
	t.Helper()
	var out []purgeRecord
	qm, err := c.Raw().Query("/v1/jobs/purged", &out, q)
	must.NoError(t, err)
	return out, qm
}

func jobIDs(records []purgeRecord) []string {
	ids := make([]string, 0, len(records))
	for _, r := range records {
		ids = append(ids, r.JobID)
	}
	return ids
}

// recordFor finds the newest record of job id in namespace ns.
func recordFor(t *testing.T, c *api.Client, ns, id string) purgeRecord {
	t.Helper()
	records, _ := listPurged(t, c, &api.QueryOptions{Namespace: ns})
	for _, r := range records {
		if r.JobID == id {
			return r
		}
	}
	t.Fatalf("no purge record for job %q in namespace %q", id, ns)
	return purgeRecord{}
}

// registerAndPurge registers job id in namespace ns (with one update, so its last version is
// 1) and purges it.
func registerAndPurge(t *testing.T, c *api.Client, ns, id string) {
	t.Helper()
	job := testJob(id)
	job.Namespace = new(ns)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	job.Meta = map[string]string{"v": "1"}
	_, _, err = c.Jobs().Register(job, nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Deregister(id, true, &api.WriteOptions{Namespace: ns})
	must.NoError(t, err)
}

func TestPurgeHistoryEndpoint(t *testing.T) {
	ta, root := NewTestACLAgent(t, nil)
	rc := ta.Client(root)
	_, err := rc.Namespaces().Register(&api.Namespace{Name: "other"}, nil)
	must.NoError(t, err)
	purger := clientToken(t, ta, root, "purger",
		`namespace "*" { capabilities = ["submit-job", "read-job", "purge-job"] }`)
	otherReader := clientToken(t, ta, root, "other-reader", `namespace "other" { capabilities = ["read-job"] }`)
	pc := ta.Client(purger.SecretID)
	purgerActor := map[string]string{"AccessorID": purger.AccessorID, "Name": "purger", "Type": "client"}

	registerAndPurge(t, pc, "default", "alpha")
	registerAndPurge(t, pc, "default", "beta")
	registerAndPurge(t, pc, "other", "gamma")
	alpha := recordFor(t, pc, "default", "alpha")
	beta := recordFor(t, pc, "default", "beta")
	gamma := recordFor(t, pc, "other", "gamma")

	t.Run("list of a namespace is newest first without the job", func(t *testing.T) {
		res := doHTTP(t, ta, http.MethodGet, "/v1/jobs/purged", nil, http.Header{"X-Nomad-Token": {purger.SecretID}})
		must.Eq(t, http.StatusOK, res.status)
		must.NotEq(t, "", res.header.Get("X-Nomad-Index"))
		var raw []json.RawMessage
		must.NoError(t, json.Unmarshal([]byte(res.body), &raw))
		must.Len(t, 2, raw)
		for _, r := range raw {
			must.Eq(t, purgeRecordListKeys, topLevelKeys(t, string(r)))
		}

		records, _ := listPurged(t, pc, nil)
		must.Eq(t, []string{"beta", "alpha"}, jobIDs(records))
		for _, r := range records {
			must.UUIDv4(t, r.ID)
			must.Eq(t, "default", r.Namespace)
			must.Eq(t, 1, r.JobVersion)
			must.Eq(t, "service", r.JobType)
			must.Eq(t, "purge", r.Reason)
			must.Eq(t, purgerActor, r.Actor)
			must.Positive(t, r.PurgeTime)
			must.Positive(t, r.CreateIndex)
			must.Nil(t, r.Job)
		}
		must.Greater(t, records[1].CreateIndex, records[0].CreateIndex)
		must.GreaterEq(t, records[1].PurgeTime, records[0].PurgeTime)
	})

	rfc := func(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }
	filters := []struct {
		name      string
		namespace string
		prefix    string
		since     string
		want      []string
	}{
		{name: "every namespace", namespace: "*", want: []string{"gamma", "beta", "alpha"}},
		{name: "other namespace", namespace: "other", want: []string{"gamma"}},
		{name: "prefix", prefix: "al", want: []string{"alpha"}},
		{name: "prefix matching nothing", prefix: "zz", want: []string{}},
		{name: "prefix across namespaces", namespace: "*", prefix: "g", want: []string{"gamma"}},
		{name: "since the second purge", since: rfc(beta.PurgeTime), want: []string{"beta"}},
		{name: "since long ago", since: "2000-01-01T00:00:00Z", want: []string{"beta", "alpha"}},
		{name: "since a future time", since: "2999-01-01T00:00:00Z", want: []string{}},
		{name: "since before 1678", since: "1000-01-01T00:00:00Z", want: []string{"beta", "alpha"}},
		{name: "since with a zone offset", namespace: "*", since: "2000-01-01T02:00:00+02:00", want: []string{"gamma", "beta", "alpha"}},
	}
	for _, tc := range filters {
		t.Run("filter "+tc.name, func(t *testing.T) {
			q := &api.QueryOptions{Namespace: tc.namespace, Prefix: tc.prefix}
			if tc.since != "" {
				q.Params = map[string]string{"since": tc.since}
			}
			records, _ := listPurged(t, pc, q)
			must.Eq(t, tc.want, jobIDs(records))
		})
	}

	badRequests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
		wantBody   string
	}{
		{name: "since not RFC 3339", method: "GET", path: "/v1/jobs/purged?since=yesterday", wantStatus: 400, wantBody: "invalid since"},
		{name: "since without a zone", method: "GET", path: "/v1/jobs/purged?since=2026-01-01T00:00:00", wantStatus: 400, wantBody: "invalid since"},
		{name: "unknown record", method: "GET", path: "/v1/jobs/purged/00000000-0000-0000-0000-000000000000", wantStatus: 404, wantBody: "purge record not found"},
		{name: "restore of an unknown record", method: "PUT", path: "/v1/jobs/purged/00000000-0000-0000-0000-000000000000/restore", wantStatus: 404, wantBody: "purge record not found"},
	}
	for _, tc := range badRequests {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, tc.method, tc.path, nil, http.Header{"X-Nomad-Token": {root}})
			must.Eq(t, tc.wantStatus, res.status)
			must.StrContains(t, res.body, tc.wantBody)
		})
	}

	t.Run("read one record with its job", func(t *testing.T) {
		var rec purgeRecord
		_, err := pc.Raw().Query("/v1/jobs/purged/"+alpha.ID, &rec, nil)
		must.NoError(t, err)
		must.Eq(t, alpha.ID, rec.ID)
		must.Eq(t, "alpha", rec.JobID)
		must.NotNil(t, rec.Job)
		must.Eq(t, "alpha", *rec.Job.ID)
		must.Eq(t, 1, *rec.Job.Version)
		must.Eq(t, "1", rec.Job.Meta["v"])
	})

	t.Run("ACL", func(t *testing.T) {
		cases := []struct {
			name       string
			token      string
			method     string
			path       string
			wantStatus int
		}{
			{name: "read-job in other reads other's record", token: otherReader.SecretID, method: "GET", path: "/v1/jobs/purged/" + gamma.ID, wantStatus: 200},
			{name: "read-job in other cannot read default's record", token: otherReader.SecretID, method: "GET", path: "/v1/jobs/purged/" + alpha.ID, wantStatus: 403},
			{name: "read-job in other cannot list default", token: otherReader.SecretID, method: "GET", path: "/v1/jobs/purged", wantStatus: 403},
			{name: "read-job cannot restore", token: otherReader.SecretID, method: "PUT", path: "/v1/jobs/purged/" + gamma.ID + "/restore", wantStatus: 403},
			{name: "anonymous cannot list", token: "", method: "GET", path: "/v1/jobs/purged?namespace=other", wantStatus: 403},
			{name: "anonymous cannot read", token: "", method: "GET", path: "/v1/jobs/purged/" + gamma.ID, wantStatus: 403},
			{name: "unknown token", token: "00000000-0000-0000-0000-000000000000", method: "GET", path: "/v1/jobs/purged", wantStatus: 403},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				header := http.Header{}
				if tc.token != "" {
					header.Set("X-Nomad-Token", tc.token)
				}
				res := doHTTP(t, ta, tc.method, tc.path, nil, header)
				must.Eq(t, tc.wantStatus, res.status, must.Sprintf("body: %s", res.body))
				if tc.wantStatus == 403 {
					must.StrHasPrefix(t, "Permission denied", res.body)
				}
			})
		}

		t.Run("list of every namespace shows only readable ones", func(t *testing.T) {
			records, _ := listPurged(t, ta.Client(otherReader.SecretID), &api.QueryOptions{Namespace: "*"})
			must.Eq(t, []string{"gamma"}, jobIDs(records))
		})
	})

	t.Run("restore", func(t *testing.T) {
		ch := subscribe(t, pc, map[api.Topic][]string{api.TopicJob: {"alpha"}}, nextIndex(ta), "")
		var resp api.JobRegisterResponse
		wm, err := pc.Raw().Write("/v1/jobs/purged/"+alpha.ID+"/restore", nil, &resp, nil)
		must.NoError(t, err)
		must.Positive(t, wm.LastIndex)
		must.NotEq(t, "", resp.EvalID)

		job, _, err := pc.Jobs().Info("alpha", nil)
		must.NoError(t, err)
		must.Eq(t, 0, *job.Version)
		must.False(t, *job.Stop)
		must.Eq(t, "1", job.Meta["v"], must.Sprint("the restored spec is the last one purged"))

		got := collectEvents(t, ch, jobEventOf("alpha", "JobRegistered"))
		must.Len(t, 1, got)
		must.Eq[any](t, map[string]any{"AccessorID": purger.AccessorID, "Name": "purger", "Type": "client"},
			got[0].Payload["Actor"])

		_, err = pc.Raw().Write("/v1/jobs/purged/"+alpha.ID+"/restore", nil, &resp, nil)
		status, _ := responseError(t, err)
		must.Eq(t, http.StatusConflict, status)

		res := doHTTP(t, ta, http.MethodPost, "/v1/jobs/purged/"+beta.ID+"/restore", nil,
			http.Header{"X-Nomad-Token": {purger.SecretID}})
		must.Eq(t, http.StatusOK, res.status, must.Sprint(res.body))
	})

	t.Run("blocking list times out with the same index", func(t *testing.T) {
		before, qm := listPurged(t, pc, nil)
		after, qm2 := listPurged(t, pc, &api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 100 * time.Millisecond})
		must.Eq(t, qm.LastIndex, qm2.LastIndex)
		must.Eq(t, jobIDs(before), jobIDs(after))
	})

	t.Run("blocking list wakes on a new purge", func(t *testing.T) {
		_, qm := listPurged(t, pc, nil)
		type result struct {
			records []purgeRecord
			qm      *api.QueryMeta
			err     error
		}
		resCh := make(chan result, 1)
		go func() {
			var out []purgeRecord
			qm, err := pc.Raw().Query("/v1/jobs/purged", &out, &api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 20 * time.Second})
			resCh <- result{out, qm, err}
		}()
		registerAndPurge(t, pc, "default", "delta")
		select {
		case res := <-resCh:
			must.NoError(t, res.err)
			must.Greater(t, qm.LastIndex, res.qm.LastIndex)
			must.Eq(t, "delta", res.records[0].JobID)
		case <-time.After(streamTimeout):
			t.Fatal("blocking list did not return after a purge")
		}
	})

	t.Run("job GC writes a gc record", func(t *testing.T) {
		_, _, err := pc.Jobs().Register(testJob("stale"), nil)
		must.NoError(t, err)
		_, _, err = pc.Jobs().Deregister("stale", false, nil)
		must.NoError(t, err)
		stopped, _, err := pc.Jobs().Info("stale", nil)
		must.NoError(t, err)
		must.NoError(t, rc.System().GarbageCollect())

		rec := recordFor(t, pc, "default", "stale")
		must.Eq(t, "gc", rec.Reason)
		must.Eq(t, map[string]string{"Type": "system", "Name": "job-gc"}, rec.Actor)
		must.Eq(t, *stopped.Version, rec.JobVersion)
		var full purgeRecord
		_, err = pc.Raw().Query("/v1/jobs/purged/"+url.PathEscape(rec.ID), &full, nil)
		must.NoError(t, err)
		must.True(t, *full.Job.Stop)
	})
}

func TestPurgeHistoryEndpoint_Retention(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) {
		c.Server.PurgeHistoryRetention = 300 * time.Millisecond
		c.reapInterval = 50 * time.Millisecond
	})
	c := ta.Client("")
	registerAndPurge(t, c, "default", "brief")
	records, qm := listPurged(t, c, nil)
	must.Eq(t, []string{"brief"}, jobIDs(records))
	id := records[0].ID

	// The leader removes the record through Raft once it is past retention: a blocking list
	// wakes when it goes.
	deadline := time.Now().Add(streamTimeout)
	for len(records) > 0 {
		must.True(t, time.Now().Before(deadline), must.Sprint("record still listed past retention"))
		records, qm = listPurged(t, c, &api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: time.Second})
	}
	_, err := c.Raw().Query("/v1/jobs/purged/"+id, new(purgeRecord), nil)
	status, _ := responseError(t, err)
	must.Eq(t, 404, status)
}
