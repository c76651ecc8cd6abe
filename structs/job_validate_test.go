package structs

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func validJob() *Job {
	count := 1
	return &Job{ID: "web", Name: "web", Type: JobTypeService, Namespace: DefaultNamespace, Priority: 50,
		TaskGroups: []*api.TaskGroup{{Name: new("g"), Count: &count,
			Tasks: []*api.Task{{Name: "t", Driver: "raw_exec"}}}}}
}

// Task and group names become directories and files on client nodes, made as root.
func TestSecurity_JobNamesValidated(t *testing.T) {
	long := strings.Repeat("a", MaxNameLength+1)
	cases := []struct {
		name    string
		mutate  func(j *Job)
		wantErr string // "" when valid
	}{
		{name: "valid", mutate: func(*Job) {}},
		{name: "longest names", mutate: func(j *Job) {
			n := strings.Repeat("a", MaxNameLength)
			j.ID, j.Name, j.TaskGroups[0].Name, j.TaskGroups[0].Tasks[0].Name = n, n, &n, n
		}},
		{name: "slash in job ID as upstream allows", mutate: func(j *Job) { j.ID = "team/web" }},
		{name: "dots inside a task name", mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "web..1" }},
		{name: "traversal task name", mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "../../../../../../../../tmp/x" },
			wantErr: `group "g": task "../../../../../../../../tmp/x": name must not contain "/"`},
		{name: "dot dot task name", mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Name = ".." },
			wantErr: `group "g": task "..": name must not be "." or ".."`},
		{name: "dot task name", mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "." },
			wantErr: `task ".": name must not be "." or ".."`},
		{name: "NUL in task name", mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "a\x00b" },
			wantErr: `task "a\x00b": name must not contain a null character`},
		{name: "control character in task name", mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "a\x1bb" },
			wantErr: "name must not contain control characters"},
		{name: "long task name", mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Name = long },
			wantErr: `name must be at most 128 characters, got 129`},
		{name: "slash in group name", mutate: func(j *Job) { j.TaskGroups[0].Name = new("../g") },
			wantErr: `group "../g": name must not contain "/"`},
		{name: "dot dot group name", mutate: func(j *Job) { j.TaskGroups[0].Name = new("..") },
			wantErr: `group "..": name must not be "." or ".."`},
		{name: "long group name", mutate: func(j *Job) { j.TaskGroups[0].Name = &long },
			wantErr: "name must be at most 128 characters"},
		{name: "NUL in job ID", mutate: func(j *Job) { j.ID = "a\x00b" }, wantErr: `Job ID "a\x00b": must not contain a null character`},
		{name: "space in job ID", mutate: func(j *Job) { j.ID = "a b" }, wantErr: `Job ID "a b" contains a space`},
		{name: "dot dot job ID", mutate: func(j *Job) { j.ID = ".." }, wantErr: `Job ID "..": must not be "." or ".."`},
		{name: "long job ID", mutate: func(j *Job) { j.ID = long }, wantErr: "Job ID \"" + long[:64] + "\"...: must be at most 128 characters, got 129"},
		{name: "NUL in job name", mutate: func(j *Job) { j.Name = "a\x00b" }, wantErr: `Job name "a\x00b": must not contain a null character`},
		{name: "control character in job name", mutate: func(j *Job) { j.Name = "a\x1bb" }, wantErr: "must not contain control characters"},
		{name: "carriage return in job ID", mutate: func(j *Job) { j.ID = "a\rb" }, wantErr: "must not contain control characters"},
		// Upstream allows these in job IDs and names; the official client's tests register them.
		{name: "newline and tab in job ID", mutate: func(j *Job) { j.ID = "id/with\\t:\n?&字"; j.Name = "a\tb" }},
		{name: "escape in job ID", mutate: func(j *Job) { j.ID = "id\x1b[2J" }, wantErr: "control characters"},
		{name: "long job name", mutate: func(j *Job) { j.Name = long }, wantErr: "Job name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.Error(t, err)
			must.StrContains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestSecurity_PeriodicSpecValidated(t *testing.T) {
	cases := []struct {
		name     string
		periodic *api.PeriodicConfig
		wantErr  string // "" when valid
	}{
		{name: "valid cron", periodic: &api.PeriodicConfig{Spec: new("*/5 * * * *")}},
		{name: "valid crons", periodic: &api.PeriodicConfig{Specs: []string{"@daily", "0 12 * * 1-5"}}},
		{name: "disabled is not checked, as upstream", periodic: &api.PeriodicConfig{Enabled: new(false), Spec: new("not a cron")}},
		{name: "not a cron", periodic: &api.PeriodicConfig{Spec: new("not a cron")},
			wantErr: `periodic.cron: invalid cron expression "not a cron"`},
		{name: "bad entry of crons", periodic: &api.PeriodicConfig{Specs: []string{"@daily", "every tuesday"}},
			wantErr: `periodic.crons: invalid cron expression "every tuesday"`},
		{name: "none", periodic: &api.PeriodicConfig{}, wantErr: "periodic: a cron expression (cron or crons) is required"},
		{name: "unknown spec type", periodic: &api.PeriodicConfig{Spec: new("@daily"), SpecType: new("interval")},
			wantErr: `periodic: unknown spec type "interval"`},
		{name: "bad time zone", periodic: &api.PeriodicConfig{Spec: new("@daily"), TimeZone: new("../../etc/passwd")},
			wantErr: `periodic.time_zone: invalid time zone "../../etc/passwd"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			j.Type = JobTypeBatch
			j.Periodic = tc.periodic
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestSecurity_CheckMaxCount(t *testing.T) {
	group := func(name string, count *int) *api.TaskGroup { return &api.TaskGroup{Name: &name, Count: count} }
	cases := []struct {
		name    string
		groups  []*api.TaskGroup
		wantErr string
	}{
		{name: "at the limit", groups: []*api.TaskGroup{group("a", new(6)), group("b", new(4))}},
		{name: "no count runs one", groups: []*api.TaskGroup{group("a", new(9)), group("b", nil)}},
		{name: "zero", groups: []*api.TaskGroup{group("a", new(0))}},
		{name: "over by the sum", groups: []*api.TaskGroup{group("a", new(6)), group("b", new(5))},
			wantErr: `group "b": count 5 brings the sum of the job's group counts above job_max_count (10)`},
		{name: "huge", groups: []*api.TaskGroup{group("a", new(99_999_999_999))}, wantErr: "job_max_count (10)"},
		{name: "no overflow", groups: []*api.TaskGroup{group("a", new(9)), group("b", new(int(^uint(0)>>1)))}, wantErr: `group "b"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			j.TaskGroups = tc.groups
			err := j.CheckMaxCount(10)
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, 400, ErrorCode(err))
		})
	}
}

func TestJobValidate_Migrate(t *testing.T) {
	cases := []struct {
		name    string
		migrate *api.MigrateStrategy
		wantErr string
	}{
		{name: "none"},
		{name: "defaults", migrate: api.DefaultMigrateStrategy()},
		{name: "zero max_parallel waits for the deadline", migrate: &api.MigrateStrategy{MaxParallel: new(0)}},
		{name: "negative max_parallel", migrate: &api.MigrateStrategy{MaxParallel: new(-1)},
			wantErr: `group "g": migrate: max_parallel must not be negative`},
		{name: "unknown health_check", migrate: &api.MigrateStrategy{HealthCheck: new("pings")},
			wantErr: `migrate: health_check must be "checks" or "task_states", got "pings"`},
		{name: "min_healthy_time past the deadline", migrate: &api.MigrateStrategy{MinHealthyTime: new(10 * time.Minute)},
			wantErr: `migrate: min_healthy_time (10m0s) must be less than healthy_deadline (5m0s)`},
		{name: "negative min_healthy_time", migrate: &api.MigrateStrategy{MinHealthyTime: new(-time.Second)},
			wantErr: "migrate: min_healthy_time must not be negative"},
		{name: "zero healthy_deadline", migrate: &api.MigrateStrategy{HealthyDeadline: new(time.Duration(0))},
			wantErr: "migrate: healthy_deadline must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			j.TaskGroups[0].Migrate = tc.migrate
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// A vault block is carried from the job file to the server and refused there by name:
// without a Vault integration the task would start without the secrets it expects.
func TestJobValidate_VaultIsRefusedByName(t *testing.T) {
	j := validJob()
	must.NoError(t, j.Validate())
	j.TaskGroups[0].Tasks[0].Vault = &api.Vault{Policies: []string{"read"}}
	must.ErrorContains(t, j.Validate(), `task "`+j.TaskGroups[0].Tasks[0].Name+`": vault: this cluster has no Vault integration`)
}

func TestJobValidate_ConnectIsRefusedPlainly(t *testing.T) {
	gateway := validJob()
	gateway.TaskGroups[0].Tasks = nil
	gateway.TaskGroups[0].Services = []*api.Service{{Name: "ingress", Connect: &api.ConsulConnect{Gateway: &api.ConsulGateway{}}}}
	err := gateway.Validate()
	must.ErrorContains(t, err, `service "ingress": connect: Consul Connect (sidecars, gateways, native) is not supported`)
	must.StrNotContains(t, err.Error(), "missing tasks")

	sidecar := validJob()
	sidecar.TaskGroups[0].Tasks[0].Services = []*api.Service{{Name: "api", Connect: &api.ConsulConnect{SidecarService: &api.ConsulSidecarService{}}}}
	must.ErrorContains(t, sidecar.Validate(), `service "api": connect: Consul Connect`)

	empty := validJob()
	empty.TaskGroups[0].Tasks = nil
	must.ErrorContains(t, empty.Validate(), "missing tasks")
}

func TestJobValidate_Artifact(t *testing.T) {
	src := "https://example.com/app.tgz"
	cases := []struct {
		name     string
		artifact *api.TaskArtifact
		wantErr  string // "" when valid
	}{
		{name: "source only", artifact: &api.TaskArtifact{GetterSource: &src}},
		{name: "shared alloc directory", artifact: &api.TaskArtifact{GetterSource: &src, RelativeDest: new("../alloc/data")}},
		{name: "no source", artifact: &api.TaskArtifact{}, wantErr: `task "t": artifact 1: source is required`},
		{name: "unknown mode", artifact: &api.TaskArtifact{GetterSource: &src, GetterMode: new("tree")}, wantErr: `mode "tree" must be any, file or dir`},
		{name: "absolute destination", artifact: &api.TaskArtifact{GetterSource: &src, RelativeDest: new("/etc/cron.d")},
			wantErr: `destination "/etc/cron.d" escapes the allocation directory`},
		{name: "destination past the allocation", artifact: &api.TaskArtifact{GetterSource: &src, RelativeDest: new("../../other-alloc")},
			wantErr: `destination "../../other-alloc" escapes the allocation directory`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			j.TaskGroups[0].Tasks[0].Artifacts = []*api.TaskArtifact{tc.artifact}
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				must.SliceEmpty(t, j.Warnings())
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}
