package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/internal/pathtest"
	"github.com/nomadfork/nomad/nomad"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// A task or group name that would lead out of the allocation directory is refused at the
// door, with a 400 naming the field, and the client creates nothing outside its data dir.
func TestSecurity_TraversalNamesRefused(t *testing.T) {
	base := t.TempDir()
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Client.AllocDir = filepath.Join(base, "data", "alloc")
		c.Client.StateDir = filepath.Join(base, "data", "client")
	})
	job := func(group, task string) string {
		return `{"Job":{"ID":"evil","Type":"batch","Datacenters":["dc1"],"TaskGroups":[{"Name":"` + group + `","Count":1,` +
			`"Tasks":[{"Name":"` + task + `","Driver":"raw_exec","Config":{"command":"/bin/true"}}]}]}}`
	}
	cases := []struct {
		name     string
		body     string
		wantBody string
	}{
		{name: "traversal task name", body: job("g", "../../../../../../../../tmp/x"),
			wantBody: `group "g": task "../../../../../../../../tmp/x": name must not contain "/"`},
		{name: "relative escape", body: job("g", "../../../escaped"), wantBody: `task "../../../escaped": name must not contain "/"`},
		{name: "dot dot task", body: job("g", ".."), wantBody: `task "..": name must not be "." or ".."`},
		{name: "NUL in task", body: job("g", `a\u0000b`), wantBody: "must not contain a null character"},
		{name: "traversal group name", body: job("../../escaped", "t"), wantBody: `group "../../escaped": name must not contain "/"`},
		{name: "long task name", body: job("g", strings.Repeat("a", 129)), wantBody: "must be at most 128 characters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := pathtest.Tree(t, base)
			res := doHTTP(t, ta, "PUT", "/v1/jobs", strings.NewReader(tc.body), nil)
			must.Eq(t, 400, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantBody)
			job, err := ta.Server().State().JobByID(nil, "default", "evil")
			must.NoError(t, err)
			must.Nil(t, job)
			must.Eq(t, before, pathtest.Tree(t, base))
		})
	}
}

// The sum of a job's group counts is bounded by server.job_max_count, at every door that
// sets a count: register, scale and revert.
func TestSecurity_JobMaxCount(t *testing.T) {
	t.Run("default limit", func(t *testing.T) {
		ta := NewTestAgent(t, nil)
		body := `{"Job":{"ID":"huge","Type":"service","Datacenters":["dc1"],"TaskGroups":[{"Name":"g","Count":99999999999,` +
			`"Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true"}}]}]}}`
		res := doHTTP(t, ta, "PUT", "/v1/jobs", strings.NewReader(body), nil)
		must.Eq(t, 400, res.status, must.Sprint(res.body))
		must.StrContains(t, res.body, `group "g": count 99999999999 brings the sum of the job's group counts above job_max_count (50000)`)
		job, err := ta.Server().State().JobByID(nil, "default", "huge")
		must.NoError(t, err)
		must.Nil(t, job)
	})

	ta := NewTestAgent(t, func(c *Config) { c.Server.JobMaxCount = 10 })
	jobs := ta.Client("").Jobs()
	job := testJob("web")
	job.TaskGroups[0].Count = new(6)
	job.AddTaskGroup(api.NewTaskGroup("api", 4).AddTask(api.NewTask("t", "raw_exec").SetConfig("command", "/bin/true")))
	_, _, err := jobs.Register(job, nil)
	must.NoError(t, err, must.Sprint("exactly the limit is allowed"))

	t.Run("register above", func(t *testing.T) {
		job.TaskGroups[1].Count = new(5)
		_, _, err := jobs.Register(job, nil)
		status, body := responseError(t, err)
		must.Eq(t, 400, status)
		must.StrContains(t, body, `group "api": count 5 brings the sum of the job's group counts above job_max_count (10)`)
	})
	t.Run("scale above", func(t *testing.T) {
		_, _, err := jobs.Scale("web", "web", new(7), "more", false, nil, nil)
		status, body := responseError(t, err)
		must.Eq(t, 400, status)
		must.StrContains(t, body, "job_max_count (10)")
	})
	t.Run("revert to a version above", func(t *testing.T) {
		// A version stored before the limit was lowered.
		stored, err := ta.Server().State().JobByID(nil, "default", "web")
		must.NoError(t, err)
		big := stored.Copy()
		big.CopyTaskGroups()
		big.TaskGroups[0].Count = new(100)
		must.NoError(t, ta.Server().State().UpsertJob(structs.JobRegisterRequestType, ta.Server().State().LatestIndex()+1, big))
		small := stored.Copy()
		small.CopyTaskGroups()
		small.TaskGroups[0].Count = new(1)
		must.NoError(t, ta.Server().State().UpsertJob(structs.JobRegisterRequestType, ta.Server().State().LatestIndex()+1, small))
		_, _, err = jobs.Revert("web", 1, nil, nil, "", "")
		status, body := responseError(t, err)
		must.Eq(t, 400, status)
		must.StrContains(t, body, "job_max_count (10)")
	})
	current, _, err := jobs.Info("web", nil)
	must.NoError(t, err)
	must.Eq(t, 1, *current.TaskGroups[0].Count)
}

func TestSecurity_JobMaxCountConfig(t *testing.T) {
	cases := []struct {
		name string
		hcl  string
		want int
	}{
		{name: "set", hcl: `server { job_max_count = 7 }`, want: 7},
		{name: "zero is the default", hcl: `server { job_max_count = 0 }`, want: nomad.DefaultJobMaxCount},
		{name: "unset is the default", hcl: `server { enabled = true }`, want: nomad.DefaultJobMaxCount},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loaded, err := loadConfigString(t, "server.hcl", tc.hcl)
			must.NoError(t, err)
			cfg := DefaultConfig().Merge(loaded)
			must.Eq(t, tc.want, serverConfig(cfg, nil).JobMaxCount)
		})
	}
	c := DevConfig()
	c.Server.JobMaxCount = -1
	err := c.Validate()
	must.ErrorContains(t, err, "server.job_max_count")
}

// Upstream refuses to change a job's type on update, and a periodic spec that is not a cron
// expression.
func TestSecurity_JobTypeChangeAndCronRefused(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()
	_, _, err := jobs.Register(testJob("web"), nil)
	must.NoError(t, err)

	t.Run("type change", func(t *testing.T) {
		batch := testJob("web")
		batch.Type = new("batch")
		_, _, err := jobs.Register(batch, nil)
		status, body := responseError(t, err)
		must.Eq(t, 400, status)
		must.StrContains(t, body, `cannot update job from type "service" to "batch"`)
		current, _, err := jobs.Info("web", nil)
		must.NoError(t, err)
		must.Eq(t, "service", *current.Type)
	})

	periodic := func(spec string) string {
		return `{"Job":{"ID":"cron","Type":"batch","Datacenters":["dc1"],"Periodic":{"Enabled":true,"Spec":"` + spec +
			`","SpecType":"cron"},"TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true"}}]}]}}`
	}
	cases := []struct {
		name       string
		body       string
		wantStatus int
		wantBody   string
	}{
		{name: "not a cron", body: periodic("not a cron"), wantStatus: 400, wantBody: `periodic.cron: invalid cron expression "not a cron"`},
		{name: "out of range", body: periodic("61 * * * *"), wantStatus: 400, wantBody: "periodic.cron"},
		{name: "too long", body: periodic(strings.Repeat("* ", 200)), wantStatus: 400, wantBody: "periodic.cron: cron expression must be at most 256 characters"},
		{name: "bad time zone", body: strings.Replace(periodic("*/5 * * * *"), `"SpecType"`, `"TimeZone":"Mars/Olympus","SpecType"`, 1),
			wantStatus: 400, wantBody: "periodic.time_zone"},
		{name: "valid", body: periodic("*/5 * * * *"), wantStatus: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, "PUT", "/v1/jobs", strings.NewReader(tc.body), nil)
			must.Eq(t, tc.wantStatus, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantBody)
		})
	}
}

// Through the HTTP API and the official client: a namespace written with DisabledTaskDrivers
// keeps raw_exec out (the replay of issue 32 item 2), the namespace reads back with its
// capabilities, and a job above job_max_total_size is a 400 naming the limit.
func TestSecurity_NamespaceCapabilitiesAndJobSizeOverHTTP(t *testing.T) {
	ta := NewTestAgent(t, func(c *Config) { c.Server.JobMaxTotalSize = 256 << 10 })
	client := ta.Client("")
	_, err := client.Namespaces().Register(&api.Namespace{Name: "team",
		Capabilities: &api.NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}}}, nil)
	must.NoError(t, err)
	ns, _, err := client.Namespaces().Info("team", nil)
	must.NoError(t, err)
	must.Eq(t, []string{"raw_exec"}, ns.Capabilities.DisabledTaskDrivers)

	job := func(namespace, meta string) string {
		return `{"Job":{"ID":"web","Namespace":"` + namespace + `","Type":"batch","Datacenters":["dc1"],"Meta":{"blob":"` + meta + `"},` +
			`"TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"raw_exec","Config":{"command":"/bin/true"}}]}]}}`
	}
	cases := []struct {
		name, method, path, body, wantBody string
	}{
		{name: "register", method: "PUT", path: "/v1/jobs", body: job("team", ""),
			wantBody: `used task driver "raw_exec" is not allowed in namespace "team"`},
		{name: "plan", method: "PUT", path: "/v1/job/web/plan?namespace=team", body: job("team", ""),
			wantBody: `used task driver "raw_exec" is not allowed in namespace "team"`},
		{name: "too large", method: "PUT", path: "/v1/jobs", body: job("default", strings.Repeat("x", 300<<10)),
			wantBody: `above job_max_total_size (256.0 KiB)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := doHTTP(t, ta, tc.method, tc.path, strings.NewReader(tc.body), nil)
			must.Eq(t, 400, res.status, must.Sprint(res.body))
			must.StrContains(t, res.body, tc.wantBody)
		})
	}
}
