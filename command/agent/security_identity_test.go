package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/jobspec"
	"github.com/shoenig/test/must"
)

// Issue 32 item 1 over HTTP: a job that names a parent, or claims to be dispatched, is
// refused with a 400 naming the field on register, update and plan; a job file run by the
// official client sends none of them and is accepted.
func TestSecurity_ServerOwnedJobFieldsRefusedHTTP(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	_, _, err := jobs.Register(testJob("cleaner"), nil)
	must.NoError(t, err)

	body := func(id, extra string) string {
		return `{"Job":{"ID":"` + id + `","Type":"batch","Datacenters":["dc1"],` + extra + `"TaskGroups":[{"Name":"g","Count":1,` +
			`"Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true"},"Identity":{"Env":true}}]}]}}`
	}
	cases := []struct {
		name      string
		method    string
		path      string
		body      string
		wantField string
	}{
		{name: "register naming a parent", method: "PUT", path: "/v1/jobs", body: body("spoof", `"ParentID":"cleaner",`), wantField: "ParentID"},
		{name: "update naming a parent", method: "PUT", path: "/v1/job/cleaner", body: body("cleaner", `"ParentID":"other",`), wantField: "ParentID"},
		{name: "register dispatched", method: "PUT", path: "/v1/jobs", body: body("spoof", `"Dispatched":true,`), wantField: "Dispatched"},
		{name: "register with an idempotency token", method: "PUT", path: "/v1/jobs", body: body("spoof", `"DispatchIdempotencyToken":"x",`), wantField: "DispatchIdempotencyToken"},
		{name: "plan naming a parent", method: "PUT", path: "/v1/job/spoof/plan", body: body("spoof", `"ParentID":"cleaner",`), wantField: "ParentID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := ta.Server().State().Index("jobs")
			res := doHTTP(t, ta, tc.method, tc.path, strings.NewReader(tc.body), nil)
			must.Eq(t, 400, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantField+" is set by the server only")
			must.Eq(t, before, ta.Server().State().Index("jobs"))
		})
	}

	t.Run("job file through the official client", func(t *testing.T) {
		src := `job "fromfile" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      identity { env = true }
    }
  }
}`
		job, err := jobspec.Parse("fromfile.nomad.hcl", []byte(src), nil)
		must.NoError(t, err)
		_, _, err = jobs.Register(job, nil)
		must.NoError(t, err)
		read, _, err := jobs.Info("fromfile", nil)
		must.NoError(t, err)
		must.Eq(t, "", *read.ParentID)
	})
}

// Issue 31 over HTTP, with a real task. Steps 1 to 3 as the issue tells them: the operator
// binds purge-job to job janitor's identity, the developer cannot purge and cannot register
// janitor (403 naming the policy), nor exec into the operator's janitor. The operator's janitor
// purges with its NOMAD_TOKEN, and the purge record names its allocation and the operator's
// token on whose behalf it acted, without a secret.
func TestSecurity_IdentityLaunderingHTTP(t *testing.T) {
	ta, root := newTestACLClientAgent(t)
	mgmt := ta.Client(root)
	_, _, err := mgmt.Jobs().Register(testJob("victim"), nil)
	must.NoError(t, err)
	_, err = mgmt.ACLPolicies().Upsert(&api.ACLPolicy{Name: "janitor",
		Rules:  `namespace "default" { capabilities = ["purge-job", "read-job", "list-jobs"] }`,
		JobACL: &api.JobACL{Namespace: "default", JobID: "janitor"}}, nil)
	must.NoError(t, err)
	mustUpsertPolicy(t, mgmt, "dev",
		`namespace "default" { capabilities = ["submit-job", "read-job", "list-jobs", "alloc-exec", "alloc-node-exec", "read-fs"] }`)
	devSecret := mustCreateToken(t, mgmt, "dev", "dev").SecretID
	dev := ta.Client(devSecret)

	janitor := func(script string) *api.Job {
		job := api.NewBatchJob("janitor", "janitor", "global", 50)
		job.Datacenters = []string{"dc1"}
		task := api.NewTask("t", "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args", []string{"-c", script})
		task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
		task.Identity = &api.WorkloadIdentity{Env: true, File: true}
		job.AddTaskGroup(api.NewTaskGroup("g", 1).AddTask(task))
		return job
	}
	purge := `curl -sf -X DELETE -H "X-Nomad-Token: $NOMAD_TOKEN" '` + ta.URL() + `/v1/job/victim?purge=true'; sleep 600`

	// Step 2.
	_, _, err = dev.Jobs().Deregister("victim", true, nil)
	status, body := responseError(t, err)
	must.Eq(t, 403, status)
	must.StrHasPrefix(t, "Permission denied: purge-job", body)
	// Step 3.
	_, _, err = dev.Jobs().Register(janitor(purge), nil)
	status, body = responseError(t, err)
	must.Eq(t, 403, status)
	must.Eq(t, "Permission denied: job janitor's identity would hold purge-job through policy janitor; your token does not", body)
	_, _, err = mgmt.Jobs().Info("victim", nil)
	must.NoError(t, err)

	// The operator's janitor, run with a management token, purges.
	alloc := runningAlloc(t, mgmt, janitor(purge))
	eventually(t, 20*time.Second, "victim to be purged", func() (bool, string) {
		_, _, err := mgmt.Jobs().Info("victim", nil)
		return err != nil && strings.Contains(err.Error(), "404"), fmt.Sprint(err)
	})

	t.Run("exec into the janitor", func(t *testing.T) {
		status, body := execStatus(t, ta, alloc.ID, execQuery("t", "/bin/sh", "-c", "echo $NOMAD_TOKEN"), devSecret)
		must.Eq(t, 403, status)
		must.Eq(t, "Permission denied: allocation "+alloc.ID+": job janitor's identity holds purge-job through policy janitor; your token does not", body)
	})
	t.Run("read the janitor's token file", func(t *testing.T) {
		for _, path := range []string{"t/secrets/nomad_token", "/t/secrets/nomad_token", "t/local/../secrets/nomad_token"} {
			res := doHTTP(t, ta, "GET", "/v1/client/fs/cat/"+alloc.ID+"?path="+path, nil, http.Header{"X-Nomad-Token": {devSecret}})
			must.Eq(t, 403, res.status, must.Sprint(path, res.body))
			must.StrHasPrefix(t, "Permission denied", res.body)
		}
	})
	t.Run("update the janitor", func(t *testing.T) {
		_, _, err := dev.Jobs().Register(janitor("sleep 600"), nil)
		status, _ := responseError(t, err)
		must.Eq(t, 403, status)
	})
	t.Run("record names the allocation and the operator", func(t *testing.T) {
		self, _, err := mgmt.ACLTokens().Self(nil)
		must.NoError(t, err)
		res := doHTTP(t, ta, "GET", "/v1/jobs/purged", nil, http.Header{"X-Nomad-Token": {root}})
		must.Eq(t, 200, res.status, must.Sprint(res.body))
		var records []struct {
			JobID string
			Actor struct {
				Name, Type, AllocID string
				OnBehalfOf          struct{ AccessorID, Name string }
			}
		}
		must.NoError(t, json.Unmarshal([]byte(res.body), &records))
		must.SliceLen(t, 1, records)
		must.Eq(t, "victim", records[0].JobID)
		must.Eq(t, "workload-identity", records[0].Actor.Type)
		must.Eq(t, "global:default:janitor:g:t:default", records[0].Actor.Name)
		must.Eq(t, alloc.ID, records[0].Actor.AllocID)
		must.Eq(t, self.AccessorID, records[0].Actor.OnBehalfOf.AccessorID)
		must.Eq(t, self.Name, records[0].Actor.OnBehalfOf.Name)
		must.StrNotContains(t, res.body, root)
	})
}
