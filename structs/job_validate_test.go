package structs

import (
	"strings"
	"testing"

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
		{name: "space in job ID", mutate: func(j *Job) { j.ID = "a b" }, wantErr: `Job ID "a b" contains whitespace`},
		{name: "dot dot job ID", mutate: func(j *Job) { j.ID = ".." }, wantErr: `Job ID "..": must not be "." or ".."`},
		{name: "long job ID", mutate: func(j *Job) { j.ID = long }, wantErr: "Job ID \"" + long[:64] + "\"...: must be at most 128 characters, got 129"},
		{name: "NUL in job name", mutate: func(j *Job) { j.Name = "a\x00b" }, wantErr: `Job name "a\x00b": must not contain a null character`},
		{name: "control character in job name", mutate: func(j *Job) { j.Name = "a\nb" }, wantErr: "must not contain control characters"},
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
