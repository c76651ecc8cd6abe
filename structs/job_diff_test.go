package structs

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// diffTestJob is version 0 of the job in fixtures/upstream-nomad-2.0.5/job-versions-diffs.txt:
// one group "web" with one raw_exec task "sleep", canonicalised as upstream stores it.
func diffTestJob() *Job {
	restart := func() *api.RestartPolicy {
		return &api.RestartPolicy{
			Attempts: new(2), Interval: new(30 * time.Minute), Delay: new(15 * time.Second),
			Mode: new("fail"), RenderTemplates: new(false),
		}
	}
	return &Job{
		Region: "global", Namespace: "default", ID: "web", Name: "web", Type: JobTypeService,
		Priority: 50, Datacenters: []string{"dc1"}, NodePool: "default",
		Update: &api.UpdateStrategy{
			Stagger: new(30 * time.Second), MaxParallel: new(1), HealthCheck: new(""),
			MinHealthyTime: new(time.Duration(0)), HealthyDeadline: new(time.Duration(0)),
			ProgressDeadline: new(time.Duration(0)), AutoRevert: new(false),
			AutoPromote: new(false), Canary: new(0),
		},
		Meta: map[string]string{"owner": "team-a"},
		TaskGroups: []*api.TaskGroup{{
			Name:          new("web"),
			Count:         new(0),
			RestartPolicy: restart(),
			EphemeralDisk: &api.EphemeralDisk{Sticky: new(false), SizeMB: new(300), Migrate: new(false)},
			Tasks: []*api.Task{{
				Name:   "sleep",
				Driver: "raw_exec",
				Config: map[string]any{"command": "/bin/sleep", "args": []any{"600"}},
				Resources: &api.Resources{
					CPU: new(50), Cores: new(0), MemoryMB: new(32), MemoryMaxMB: new(0),
					DiskMB: new(0), IOPS: new(0), SecretsMB: new(0),
				},
				RestartPolicy: restart(),
				KillTimeout:   new(5 * time.Second),
				LogConfig:     &api.LogConfig{MaxFiles: new(10), MaxFileSizeMB: new(10), Disabled: new(false)},
				Identity:      &api.WorkloadIdentity{Name: "default", Audience: []string{"nomadproject.io"}},
			}},
		}},
		NomadTokenID: "8780cc32-bf60-1308-53ed-5037b281b74d",
		Status:       JobStatusDead, Version: 0, SubmitTime: 1796201705318252300,
		CreateIndex: 14, ModifyIndex: 15, JobModifyIndex: 14,
	}
}

// jobCopy deep-copies a job through JSON; the two sides of a diff must not share pointers.
func jobCopy(t *testing.T, j *Job) *Job {
	t.Helper()
	raw, err := json.Marshal(j)
	must.NoError(t, err)
	var out Job
	must.NoError(t, json.Unmarshal(raw, &out))
	return &out
}

// unchangedGroups is how upstream lists the untouched group and task of diffTestJob.
func unchangedGroups() []*TaskGroupDiff {
	return []*TaskGroupDiff{{
		Type: DiffTypeNone, Name: "web",
		Tasks: []*TaskDiff{{Type: DiffTypeNone, Name: "sleep"}},
	}}
}

func TestJob_Diff(t *testing.T) {
	cases := []struct {
		name   string
		before func(*Job) // applied to both versions
		mutate func(*Job) // applied to the new version
		want   *JobDiff
	}{
		{
			name:   "unchanged job",
			mutate: func(*Job) {},
			want:   &JobDiff{Type: DiffTypeNone, ID: "web", TaskGroups: unchangedGroups()},
		},
		{
			name: "server-managed fields are ignored",
			mutate: func(j *Job) {
				j.Version, j.SubmitTime, j.ModifyIndex, j.JobModifyIndex = 7, 99, 20, 19
				j.Status, j.Stable, j.NomadTokenID = JobStatusRunning, true, "other"
				j.VersionTag = &JobVersionTag{Name: "v1"}
				j.Payload = []byte("x")
			},
			want: &JobDiff{Type: DiffTypeNone, ID: "web", TaskGroups: unchangedGroups()},
		},
		{
			name:   "priority changed",
			mutate: func(j *Job) { j.Priority = 60 },
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				Fields:     []*FieldDiff{{Type: DiffTypeEdited, Name: "Priority", Old: "50", New: "60"}},
				TaskGroups: unchangedGroups(),
			},
		},
		{
			name:   "meta key changed",
			mutate: func(j *Job) { j.Meta["owner"] = "team-b" },
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				Fields:     []*FieldDiff{{Type: DiffTypeEdited, Name: "Meta[owner]", Old: "team-a", New: "team-b"}},
				TaskGroups: unchangedGroups(),
			},
		},
		{
			name:   "meta key added",
			mutate: func(j *Job) { j.Meta["tier"] = "gold" },
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				Fields:     []*FieldDiff{{Type: DiffTypeAdded, Name: "Meta[tier]", New: "gold"}},
				TaskGroups: unchangedGroups(),
			},
		},
		{
			name:   "meta key removed",
			mutate: func(j *Job) { j.Meta = nil },
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				Fields:     []*FieldDiff{{Type: DiffTypeDeleted, Name: "Meta[owner]", Old: "team-a"}},
				TaskGroups: unchangedGroups(),
			},
		},
		{
			name:   "datacenters changed",
			mutate: func(j *Job) { j.Datacenters = []string{"dc2", "dc3"} },
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				Objects: []*ObjectDiff{{
					Type: DiffTypeEdited, Name: "Datacenters",
					Fields: []*FieldDiff{
						{Type: DiffTypeDeleted, Name: "Datacenters", Old: "dc1"},
						{Type: DiffTypeAdded, Name: "Datacenters", New: "dc2"},
						{Type: DiffTypeAdded, Name: "Datacenters", New: "dc3"},
					},
				}},
				TaskGroups: unchangedGroups(),
			},
		},
		{
			name: "nested struct field changed",
			mutate: func(j *Job) {
				j.Update.MaxParallel = new(3)
				j.Update.Stagger = nil
			},
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				Objects: []*ObjectDiff{{
					Type: DiffTypeEdited, Name: "Update",
					Fields: []*FieldDiff{
						{Type: DiffTypeEdited, Name: "MaxParallel", Old: "1", New: "3"},
						{Type: DiffTypeDeleted, Name: "Stagger", Old: "30000000000"},
					},
				}},
				TaskGroups: unchangedGroups(),
			},
		},
		{
			name: "constraint added",
			mutate: func(j *Job) {
				j.Constraints = []*api.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
			},
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				Objects: []*ObjectDiff{{
					Type: DiffTypeAdded, Name: "Constraint",
					Fields: []*FieldDiff{
						{Type: DiffTypeAdded, Name: "LTarget", New: "${attr.kernel.name}"},
						{Type: DiffTypeAdded, Name: "Operand", New: "="},
						{Type: DiffTypeAdded, Name: "RTarget", New: "linux"},
					},
				}},
				TaskGroups: unchangedGroups(),
			},
		},
		{
			name: "constraint edited is a deletion and an addition",
			before: func(j *Job) {
				j.Constraints = []*api.Constraint{
					{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="},
					{LTarget: "${node.class}", RTarget: "small", Operand: "="},
				}
			},
			mutate: func(j *Job) {
				j.Constraints[0], j.Constraints[1] = j.Constraints[1], j.Constraints[0]
				j.Constraints[0].RTarget = "large"
			},
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				Objects: []*ObjectDiff{
					{Type: DiffTypeDeleted, Name: "Constraint", Fields: []*FieldDiff{
						{Type: DiffTypeDeleted, Name: "LTarget", Old: "${node.class}"},
						{Type: DiffTypeDeleted, Name: "Operand", Old: "="},
						{Type: DiffTypeDeleted, Name: "RTarget", Old: "small"},
					}},
					{Type: DiffTypeAdded, Name: "Constraint", Fields: []*FieldDiff{
						{Type: DiffTypeAdded, Name: "LTarget", New: "${node.class}"},
						{Type: DiffTypeAdded, Name: "Operand", New: "="},
						{Type: DiffTypeAdded, Name: "RTarget", New: "large"},
					}},
				},
				TaskGroups: unchangedGroups(),
			},
		},
		{
			name: "named element edited keeps its name",
			before: func(j *Job) {
				j.TaskGroups[0].Services = []*api.Service{
					{Name: "web", PortLabel: "http"}, {Name: "admin", PortLabel: "admin"},
				}
			},
			mutate: func(j *Job) {
				services := j.TaskGroups[0].Services
				services[0], services[1] = services[1], services[0]
				services[1].PortLabel = "https"
			},
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				TaskGroups: []*TaskGroupDiff{{
					Type: DiffTypeEdited, Name: "web",
					Objects: []*ObjectDiff{{
						Type: DiffTypeEdited, Name: "Service",
						Fields: []*FieldDiff{
							{Type: DiffTypeNone, Name: "Name", Old: "web", New: "web"},
							{Type: DiffTypeEdited, Name: "PortLabel", Old: "http", New: "https"},
						},
					}},
					Tasks: []*TaskDiff{{Type: DiffTypeNone, Name: "sleep"}},
				}},
			},
		},
		{
			name:   "group count changed",
			mutate: func(j *Job) { j.TaskGroups[0].Count = new(3) },
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				TaskGroups: []*TaskGroupDiff{{
					Type: DiffTypeEdited, Name: "web",
					Fields: []*FieldDiff{{Type: DiffTypeEdited, Name: "Count", Old: "0", New: "3"}},
					Tasks:  []*TaskDiff{{Type: DiffTypeNone, Name: "sleep"}},
				}},
			},
		},
		{
			name:   "task config arg changed",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Config["args"] = []any{"700"} },
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				TaskGroups: []*TaskGroupDiff{{
					Type: DiffTypeEdited, Name: "web",
					Tasks: []*TaskDiff{{
						Type: DiffTypeEdited, Name: "sleep",
						Objects: []*ObjectDiff{{
							Type: DiffTypeEdited, Name: "Config",
							Fields: []*FieldDiff{{Type: DiffTypeEdited, Name: "args[0]", Old: "600", New: "700"}},
						}},
					}},
				}},
			},
		},
		{
			name: "task resources and env changed",
			mutate: func(j *Job) {
				task := j.TaskGroups[0].Tasks[0]
				task.Resources.CPU = new(100)
				task.Env = map[string]string{"MODE": "fast"}
			},
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				TaskGroups: []*TaskGroupDiff{{
					Type: DiffTypeEdited, Name: "web",
					Tasks: []*TaskDiff{{
						Type: DiffTypeEdited, Name: "sleep",
						Fields: []*FieldDiff{{Type: DiffTypeAdded, Name: "Env[MODE]", New: "fast"}},
						Objects: []*ObjectDiff{{
							Type: DiffTypeEdited, Name: "Resources",
							Fields: []*FieldDiff{{Type: DiffTypeEdited, Name: "CPU", Old: "50", New: "100"}},
						}},
					}},
				}},
			},
		},
		{
			name: "group added and deleted",
			mutate: func(j *Job) {
				j.TaskGroups[0] = &api.TaskGroup{
					Name:  new("api"),
					Count: new(2),
					Tasks: []*api.Task{{Name: "serve", Driver: "docker"}},
				}
			},
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				TaskGroups: []*TaskGroupDiff{
					{
						Type: DiffTypeAdded, Name: "api",
						Fields: []*FieldDiff{{Type: DiffTypeAdded, Name: "Count", New: "2"}},
						Tasks: []*TaskDiff{{
							Type: DiffTypeAdded, Name: "serve",
							Fields: []*FieldDiff{
								{Type: DiffTypeAdded, Name: "Driver", New: "docker"},
								{Type: DiffTypeAdded, Name: "Leader", New: "false"},
								{Type: DiffTypeAdded, Name: "ShutdownDelay", New: "0"},
							},
						}},
					},
					{
						Type: DiffTypeDeleted, Name: "web",
						Fields: []*FieldDiff{{Type: DiffTypeDeleted, Name: "Count", Old: "0"}},
						Objects: []*ObjectDiff{
							{Type: DiffTypeDeleted, Name: "EphemeralDisk", Fields: []*FieldDiff{
								{Type: DiffTypeDeleted, Name: "Migrate", Old: "false"},
								{Type: DiffTypeDeleted, Name: "SizeMB", Old: "300"},
								{Type: DiffTypeDeleted, Name: "Sticky", Old: "false"},
							}},
							{Type: DiffTypeDeleted, Name: "RestartPolicy", Fields: []*FieldDiff{
								{Type: DiffTypeDeleted, Name: "Attempts", Old: "2"},
								{Type: DiffTypeDeleted, Name: "Delay", Old: "15000000000"},
								{Type: DiffTypeDeleted, Name: "Interval", Old: "1800000000000"},
								{Type: DiffTypeDeleted, Name: "Mode", Old: "fail"},
								{Type: DiffTypeDeleted, Name: "RenderTemplates", Old: "false"},
							}},
						},
						Tasks: []*TaskDiff{{
							Type: DiffTypeDeleted, Name: "sleep",
							Fields: []*FieldDiff{
								{Type: DiffTypeDeleted, Name: "Driver", Old: "raw_exec"},
								{Type: DiffTypeDeleted, Name: "KillTimeout", Old: "5000000000"},
								{Type: DiffTypeDeleted, Name: "Leader", Old: "false"},
								{Type: DiffTypeDeleted, Name: "ShutdownDelay", Old: "0"},
							},
							Objects: deletedSleepObjects(),
						}},
					},
				},
			},
		},
		{
			name: "task added",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks = append(j.TaskGroups[0].Tasks, &api.Task{
					Name: "log", Driver: "raw_exec", Leader: true,
					Config: map[string]any{"command": "/bin/tail"},
				})
			},
			want: &JobDiff{
				Type: DiffTypeEdited, ID: "web",
				TaskGroups: []*TaskGroupDiff{{
					Type: DiffTypeEdited, Name: "web",
					Tasks: []*TaskDiff{
						{
							Type: DiffTypeAdded, Name: "log",
							Fields: []*FieldDiff{
								{Type: DiffTypeAdded, Name: "Driver", New: "raw_exec"},
								{Type: DiffTypeAdded, Name: "Leader", New: "true"},
								{Type: DiffTypeAdded, Name: "ShutdownDelay", New: "0"},
							},
							Objects: []*ObjectDiff{{
								Type: DiffTypeAdded, Name: "Config",
								Fields: []*FieldDiff{{Type: DiffTypeAdded, Name: "command", New: "/bin/tail"}},
							}},
						},
						{Type: DiffTypeNone, Name: "sleep"},
					},
				}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := diffTestJob()
			if tc.before != nil {
				tc.before(old)
			}
			updated := jobCopy(t, old)
			tc.mutate(updated)
			got, err := old.Diff(updated, false)
			must.NoError(t, err)
			must.Eq(t, tc.want, got)
		})
	}
}

// deletedSleepObjects is what deleting the fixture's task "sleep" reports besides its fields.
func deletedSleepObjects() []*ObjectDiff {
	return []*ObjectDiff{
		{Type: DiffTypeDeleted, Name: "Config", Fields: []*FieldDiff{
			{Type: DiffTypeDeleted, Name: "args[0]", Old: "600"},
			{Type: DiffTypeDeleted, Name: "command", Old: "/bin/sleep"},
		}},
		{Type: DiffTypeDeleted, Name: "Identity", Fields: []*FieldDiff{
			{Type: DiffTypeDeleted, Name: "Env", Old: "false"},
			{Type: DiffTypeDeleted, Name: "File", Old: "false"},
			{Type: DiffTypeDeleted, Name: "Name", Old: "default"},
			{Type: DiffTypeDeleted, Name: "TTL", Old: "0"},
		}, Objects: []*ObjectDiff{{Type: DiffTypeDeleted, Name: "Audience", Fields: []*FieldDiff{
			{Type: DiffTypeDeleted, Name: "Audience", Old: "nomadproject.io"},
		}}}},
		{Type: DiffTypeDeleted, Name: "LogConfig", Fields: []*FieldDiff{
			{Type: DiffTypeDeleted, Name: "Disabled", Old: "false"},
			{Type: DiffTypeDeleted, Name: "MaxFileSizeMB", Old: "10"},
			{Type: DiffTypeDeleted, Name: "MaxFiles", Old: "10"},
		}},
		{Type: DiffTypeDeleted, Name: "Resources", Fields: []*FieldDiff{
			{Type: DiffTypeDeleted, Name: "CPU", Old: "50"},
			{Type: DiffTypeDeleted, Name: "Cores", Old: "0"},
			{Type: DiffTypeDeleted, Name: "DiskMB", Old: "0"},
			{Type: DiffTypeDeleted, Name: "IOPS", Old: "0"},
			{Type: DiffTypeDeleted, Name: "MemoryMB", Old: "32"},
			{Type: DiffTypeDeleted, Name: "MemoryMaxMB", Old: "0"},
			{Type: DiffTypeDeleted, Name: "SecretsMB", Old: "0"},
		}},
		{Type: DiffTypeDeleted, Name: "RestartPolicy", Fields: []*FieldDiff{
			{Type: DiffTypeDeleted, Name: "Attempts", Old: "2"},
			{Type: DiffTypeDeleted, Name: "Delay", Old: "15000000000"},
			{Type: DiffTypeDeleted, Name: "Interval", Old: "1800000000000"},
			{Type: DiffTypeDeleted, Name: "Mode", Old: "fail"},
			{Type: DiffTypeDeleted, Name: "RenderTemplates", Old: "false"},
		}},
	}
}

func TestJob_Diff_Contextual(t *testing.T) {
	cases := []struct {
		name       string
		mutate     func(*Job)
		wantType   string
		wantFields map[string]*FieldDiff
	}{
		{
			name:     "unchanged job lists its fields as None",
			mutate:   func(*Job) {},
			wantType: DiffTypeNone,
			wantFields: map[string]*FieldDiff{
				"Priority":    {Type: DiffTypeNone, Name: "Priority", Old: "50", New: "50"},
				"Meta[owner]": {Type: DiffTypeNone, Name: "Meta[owner]", Old: "team-a", New: "team-a"},
			},
		},
		{
			name:     "a change keeps the unchanged fields beside it",
			mutate:   func(j *Job) { j.Priority = 70 },
			wantType: DiffTypeEdited,
			wantFields: map[string]*FieldDiff{
				"Priority": {Type: DiffTypeEdited, Name: "Priority", Old: "50", New: "70"},
				"Region":   {Type: DiffTypeNone, Name: "Region", Old: "global", New: "global"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := diffTestJob()
			updated := jobCopy(t, old)
			tc.mutate(updated)
			got, err := old.Diff(updated, true)
			must.NoError(t, err)
			must.Eq(t, tc.wantType, got.Type)
			byName := map[string]*FieldDiff{}
			for _, f := range got.Fields {
				byName[f.Name] = f
			}
			for name, want := range tc.wantFields {
				must.Eq(t, want, byName[name], must.Sprintf("field %s", name))
			}
			must.MapNotContainsKey(t, byName, "Version")
			must.SliceEmpty(t, got.Objects) // unchanged objects stay out even in context
		})
	}
}

func TestJob_Diff_Sides(t *testing.T) {
	cases := []struct {
		name     string
		old, new *Job
		wantType string
		wantErr  bool
	}{
		{name: "both nil", wantType: DiffTypeNone},
		{name: "added", new: &Job{ID: "web"}, wantType: DiffTypeAdded},
		{name: "deleted", old: &Job{ID: "web"}, wantType: DiffTypeDeleted},
		{name: "different IDs", old: &Job{ID: "web"}, new: &Job{ID: "api"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.old.Diff(tc.new, false)
			if tc.wantErr {
				must.Error(t, err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.wantType, got.Type)
		})
	}
}

// upstreamVersionsDiff is the "Diffs" entry of the response of GET /v1/job/web/versions?diffs=true
// from Nomad 2.0.5 (fixtures/upstream-nomad-2.0.5/job-versions-diffs.txt): version 1 changed
// only Meta owner from team-a to team-b.
const upstreamVersionsDiff = `{
  "Type": "Edited",
  "ID": "web",
  "Fields": [
    {"Type": "Edited", "Name": "Meta[owner]", "Old": "team-a", "New": "team-b", "Annotations": null}
  ],
  "Objects": null,
  "TaskGroups": [
    {
      "Type": "None", "Name": "web", "Fields": null, "Objects": null,
      "Tasks": [{"Type": "None", "Name": "sleep", "Fields": null, "Objects": null, "Annotations": null}],
      "Updates": null
    }
  ]
}`

func TestJob_Diff_UpstreamFixture(t *testing.T) {
	cases := []struct {
		name       string
		contextual bool
	}{
		{name: "versions endpoint diff", contextual: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v0 := diffTestJob()
			v1 := jobCopy(t, v0)
			v1.Meta = map[string]string{"owner": "team-b"}
			v1.Version, v1.SubmitTime, v1.ModifyIndex, v1.JobModifyIndex = 1, 1796201706140062794, 17, 16

			got, err := v0.Diff(v1, tc.contextual)
			must.NoError(t, err)

			var want JobDiff
			must.NoError(t, json.Unmarshal([]byte(upstreamVersionsDiff), &want))
			must.Eq(t, want.Type, got.Type)
			must.Eq(t, want.Fields, got.Fields)

			// The whole document, nulls included, is what clients decode.
			gotJSON, err := json.Marshal(got)
			must.NoError(t, err)
			must.EqJSON(t, upstreamVersionsDiff, string(gotJSON))
		})
	}
}

// Every ignored name must still be a Job field, or a rename would silently start diffing a
// server-managed value.
func TestJob_DiffIgnoredFieldsExist(t *testing.T) {
	jobType := reflect.TypeFor[Job]()
	for name := range jobDiffIgnored {
		t.Run(name, func(t *testing.T) {
			_, ok := jobType.FieldByName(name)
			must.True(t, ok)
		})
	}
}
