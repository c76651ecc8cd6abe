package state

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestStateStore_UpsertJob_Register(t *testing.T) {
	s := testStateStore(t)
	upsertJob(t, s, 10, mockJob("web"))

	job, err := s.JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.NotNil(t, job)
	must.Eq(t, uint64(0), job.Version)
	must.Eq(t, uint64(10), job.CreateIndex)
	must.Eq(t, uint64(10), job.ModifyIndex)
	must.Eq(t, uint64(10), job.JobModifyIndex)
	must.Eq(t, structs.JobStatusPending, job.Status)
	must.Nil(t, job.VersionTag)

	must.Eq(t, []uint64{0}, jobVersions(t, s, structs.DefaultNamespace, "web"))
	v0, err := s.JobByIDAndVersion(nil, structs.DefaultNamespace, "web", 0)
	must.NoError(t, err)
	must.Eq(t, job, v0)

	summary, err := s.JobSummaryByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.NotNil(t, summary)
	must.Eq(t, uint64(10), summary.CreateIndex)
	must.MapContainsKey(t, summary.Summary, "web")
	must.Nil(t, summary.Children)

	for _, table := range []string{tableJobs, tableJobVersion, tableJobSummary} {
		must.Eq(t, uint64(10), s.Index(table), must.Sprintf("table %s", table))
	}
}

func TestStateStore_UpsertJob_Status(t *testing.T) {
	cases := []struct {
		name   string
		modify func(j *structs.Job)
		want   string
	}{
		{name: "service", modify: func(*structs.Job) {}, want: structs.JobStatusPending},
		{name: "batch", modify: func(j *structs.Job) { j.Type = structs.JobTypeBatch }, want: structs.JobStatusPending},
		{name: "system", modify: func(j *structs.Job) { j.Type = structs.JobTypeSystem }, want: structs.JobStatusRunning},
		{
			name: "periodic",
			modify: func(j *structs.Job) {
				j.Type = structs.JobTypeBatch
				j.Periodic = &api.PeriodicConfig{Enabled: ptrOf(true), Specs: []string{"@daily"}}
			},
			want: structs.JobStatusRunning,
		},
		{
			name: "parameterized",
			modify: func(j *structs.Job) {
				j.Type = structs.JobTypeBatch
				j.ParameterizedJob = &api.ParameterizedJobConfig{}
			},
			want: structs.JobStatusRunning,
		},
		{name: "stopped", modify: func(j *structs.Job) { j.Stop = true }, want: structs.JobStatusDead},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			job := mockJob("web")
			tc.modify(job)
			upsertJob(t, s, 10, job)
			got, err := s.JobByID(nil, structs.DefaultNamespace, "web")
			must.NoError(t, err)
			must.Eq(t, tc.want, got.Status)
		})
	}
}

func TestStateStore_UpsertJob_Versioning(t *testing.T) {
	tag := &structs.JobVersionTag{Name: "golden", Description: "known good", TaggedTime: 1}
	cases := []struct {
		name   string
		modify func(j *structs.Job)
		// tagFirst tags version 0 before the second register.
		tagFirst           bool
		wantVersion        uint64
		wantJobModifyIndex uint64
		wantTag            *structs.JobVersionTag
		wantVersions       []uint64
	}{
		{
			name:               "identical keeps version",
			modify:             func(*structs.Job) {},
			wantVersion:        0,
			wantJobModifyIndex: 10,
			wantVersions:       []uint64{0},
		},
		{
			name:               "identical keeps tag",
			modify:             func(*structs.Job) {},
			tagFirst:           true,
			wantVersion:        0,
			wantJobModifyIndex: 10,
			wantTag:            tag,
			wantVersions:       []uint64{0},
		},
		{
			name: "server-managed fields only are identical",
			modify: func(j *structs.Job) {
				j.SubmitTime = 12345
				j.Status = structs.JobStatusDead
				j.Version = 7
				j.NomadTokenID = "abc"
			},
			wantVersion:        0,
			wantJobModifyIndex: 10,
			wantVersions:       []uint64{0},
		},
		{
			name:               "priority change",
			modify:             func(j *structs.Job) { j.Priority = 70 },
			wantVersion:        1,
			wantJobModifyIndex: 20,
			wantVersions:       []uint64{1, 0},
		},
		{
			name:               "nested group change",
			modify:             func(j *structs.Job) { j.TaskGroups[0].Count = ptrOf(3) },
			wantVersion:        1,
			wantJobModifyIndex: 20,
			wantVersions:       []uint64{1, 0},
		},
		{
			name:               "spec change clears tag",
			modify:             func(j *structs.Job) { j.Meta["owner"] = "team-b" },
			tagFirst:           true,
			wantVersion:        1,
			wantJobModifyIndex: 20,
			wantVersions:       []uint64{1, 0},
		},
		{
			name:               "stop is a new version",
			modify:             func(j *structs.Job) { j.Stop = true },
			wantVersion:        1,
			wantJobModifyIndex: 20,
			wantVersions:       []uint64{1, 0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			upsertJob(t, s, 10, mockJob("web"))
			if tc.tagFirst {
				mustApply(t, s, structs.JobVersionTagRequestType, 15, nil, func(txn *Txn) error {
					return s.TagJobVersionTxn(txn, structs.DefaultNamespace, "web", ptrOf(uint64(0)), tag.Name, tag)
				})
			}
			next := mockJob("web")
			tc.modify(next)
			upsertJob(t, s, 20, next)

			job, err := s.JobByID(nil, structs.DefaultNamespace, "web")
			must.NoError(t, err)
			must.Eq(t, tc.wantVersion, job.Version)
			must.Eq(t, tc.wantJobModifyIndex, job.JobModifyIndex)
			must.Eq(t, uint64(10), job.CreateIndex)
			must.Eq(t, uint64(20), job.ModifyIndex)
			must.Eq(t, tc.wantTag, job.VersionTag)
			must.Eq(t, tc.wantVersions, jobVersions(t, s, structs.DefaultNamespace, "web"))

			// The stored version row mirrors the job row.
			current, err := s.JobByIDAndVersion(nil, structs.DefaultNamespace, "web", tc.wantVersion)
			must.NoError(t, err)
			must.Eq(t, job, current)
			if tc.tagFirst && tc.wantVersion > 0 {
				v0, err := s.JobByIDAndVersion(nil, structs.DefaultNamespace, "web", 0)
				must.NoError(t, err)
				must.Eq(t, tag, v0.VersionTag)
			}
		})
	}
}

// registerVersions registers count spec changes of job id from index, one per index.
func registerVersions(t *testing.T, s *StateStore, id string, index uint64, count int) uint64 {
	t.Helper()
	for i := 0; i < count; i++ {
		job := mockJob(id)
		job.Meta["rev"] = string(rune('a' + int(index%26)))
		job.Priority = int(index%90) + 1
		upsertJob(t, s, index, job)
		index++
	}
	return index
}

func TestStateStore_UpsertJob_PruneVersions(t *testing.T) {
	cases := []struct {
		name    string
		tracked int
		// before versions are registered, then tagVersions are tagged, then after more.
		before, after int
		tagVersions   []uint64
		untag         []uint64
		want          []uint64
	}{
		{name: "default keeps six", before: 10, want: []uint64{9, 8, 7, 6, 5, 4}},
		{name: "configured three", tracked: 3, before: 5, want: []uint64{4, 3, 2}},
		{name: "fewer than limit", tracked: 3, before: 2, want: []uint64{1, 0}},
		{
			name: "tagged never pruned and not counted", before: 3, tagVersions: []uint64{1}, after: 7,
			want: []uint64{9, 8, 7, 6, 5, 4, 1},
		},
		{
			name: "several tagged", tracked: 2, before: 2, tagVersions: []uint64{0, 1}, after: 4,
			want: []uint64{5, 4, 1, 0},
		},
		{
			name: "untag makes prunable", before: 3, tagVersions: []uint64{1}, after: 7, untag: []uint64{1},
			want: []uint64{9, 8, 7, 6, 5, 4},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStoreConfig(t, Config{JobTrackedVersions: tc.tracked})
			index := registerVersions(t, s, "web", 10, tc.before)
			tagName := func(v uint64) string { return "v" + string(rune('0'+v)) }
			for _, v := range tc.tagVersions {
				mustApply(t, s, structs.JobVersionTagRequestType, index, nil, func(txn *Txn) error {
					return s.TagJobVersionTxn(txn, structs.DefaultNamespace, "web", ptrOf(v), tagName(v), &structs.JobVersionTag{Name: tagName(v)})
				})
				index++
			}
			index = registerVersions(t, s, "web", index, tc.after)
			for _, v := range tc.untag {
				mustApply(t, s, structs.JobVersionTagRequestType, index, nil, func(txn *Txn) error {
					return s.TagJobVersionTxn(txn, structs.DefaultNamespace, "web", nil, tagName(v), nil)
				})
				index++
			}
			must.Eq(t, tc.want, jobVersions(t, s, structs.DefaultNamespace, "web"))
		})
	}
}

func TestStateStore_TagJobVersion(t *testing.T) {
	golden := &structs.JobVersionTag{Name: "golden", Description: "first", TaggedTime: 100}
	cases := []struct {
		name     string
		id       string
		version  *uint64
		tagName  string
		tag      *structs.JobVersionTag
		wantCode int // 0: success
	}{
		{name: "duplicate name on another version", id: "web", version: ptrOf(uint64(2)), tagName: "golden", tag: &structs.JobVersionTag{Name: "golden"}, wantCode: 400},
		{name: "unknown version", id: "web", version: ptrOf(uint64(42)), tagName: "other", tag: &structs.JobVersionTag{Name: "other"}, wantCode: 404},
		{name: "unknown job", id: "nope", version: ptrOf(uint64(0)), tagName: "other", tag: &structs.JobVersionTag{Name: "other"}, wantCode: 404},
		{name: "untag unknown name", id: "web", tagName: "missing", wantCode: 404},
		{name: "retag same version", id: "web", version: ptrOf(uint64(1)), tagName: "golden", tag: &structs.JobVersionTag{Name: "golden", Description: "second"}},
		{name: "second name on current version", id: "web", version: ptrOf(uint64(2)), tagName: "current", tag: &structs.JobVersionTag{Name: "current"}},
		{name: "no version tags current", id: "web", tagName: "current", tag: &structs.JobVersionTag{Name: "current"}},
		{name: "untag", id: "web", tagName: "golden"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			registerVersions(t, s, "web", 10, 3) // versions 0..2 at 10..12
			mustApply(t, s, structs.JobVersionTagRequestType, 20, nil, func(txn *Txn) error {
				return s.TagJobVersionTxn(txn, structs.DefaultNamespace, "web", ptrOf(uint64(1)), golden.Name, golden)
			})
			before, err := s.JobByID(nil, structs.DefaultNamespace, "web")
			must.NoError(t, err)

			err = applyTxn(s, structs.JobVersionTagRequestType, 30, nil, func(txn *Txn) error {
				return s.TagJobVersionTxn(txn, structs.DefaultNamespace, tc.id, tc.version, tc.tagName, tc.tag)
			})
			if tc.wantCode != 0 {
				mustCode(t, tc.wantCode, err)
				after, err := s.JobByID(nil, structs.DefaultNamespace, "web")
				must.NoError(t, err)
				must.Eq(t, before, after)
				return
			}
			must.NoError(t, err)

			target := uint64(2)
			if tc.version != nil {
				target = *tc.version
			}
			if tc.tag == nil { // untag: the tag was on version 1
				target = 1
			}
			v, err := s.JobByIDAndVersion(nil, structs.DefaultNamespace, "web", target)
			must.NoError(t, err)
			must.Eq(t, tc.tag, v.VersionTag)

			job, err := s.JobByID(nil, structs.DefaultNamespace, "web")
			must.NoError(t, err)
			must.Eq(t, uint64(2), job.Version)
			must.Eq(t, before.JobModifyIndex, job.JobModifyIndex)
			if target == job.Version {
				// Tagging the current version shows on the job itself.
				must.Eq(t, tc.tag, job.VersionTag)
				must.Eq(t, uint64(30), job.ModifyIndex)
			} else {
				must.Eq(t, before, job)
			}
		})
	}
}

func TestStateStore_DeleteJob(t *testing.T) {
	s := testStateStore(t)
	index := registerVersions(t, s, "web", 10, 3)
	index = registerVersions(t, s, "web2", index, 2)
	upsertNamespaces(t, s, index, "prod")
	index++
	upsertJob(t, s, index, mockJobIn("prod", "web"))
	index++

	mustApply(t, s, structs.JobDeregisterRequestType, index, &TxnMeta{Purge: true}, func(txn *Txn) error {
		return s.DeleteJobTxn(txn, structs.DefaultNamespace, "web")
	})

	job, err := s.JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Nil(t, job)
	must.Eq(t, []uint64{}, jobVersions(t, s, structs.DefaultNamespace, "web"))
	summary, err := s.JobSummaryByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	must.Nil(t, summary)
	for _, table := range []string{tableJobs, tableJobVersion, tableJobSummary} {
		must.Eq(t, index, s.Index(table), must.Sprintf("table %s", table))
	}

	// A job whose ID extends the deleted one's, and the same ID in another namespace, keep
	// everything.
	for _, id := range []structs.NamespacedID{{ID: "web2", Namespace: structs.DefaultNamespace}, {ID: "web", Namespace: "prod"}} {
		job, err := s.JobByID(nil, id.Namespace, id.ID)
		must.NoError(t, err)
		must.NotNil(t, job, must.Sprintf("job %s", id))
		summary, err := s.JobSummaryByID(nil, id.Namespace, id.ID)
		must.NoError(t, err)
		must.NotNil(t, summary, must.Sprintf("summary of %s", id))
	}
	must.Eq(t, []uint64{1, 0}, jobVersions(t, s, structs.DefaultNamespace, "web2"))
	must.Eq(t, []uint64{0}, jobVersions(t, s, "prod", "web"))

	err = applyTxn(s, structs.JobDeregisterRequestType, index+1, &TxnMeta{Purge: true}, func(txn *Txn) error {
		return s.DeleteJobTxn(txn, structs.DefaultNamespace, "web")
	})
	mustCode(t, 404, err)
	must.ErrorIs(t, err, structs.ErrJobNotFound)
}

func TestStateStore_Jobs(t *testing.T) {
	s := testStateStore(t)
	upsertNamespaces(t, s, 5, "prod")
	for i, job := range []*structs.Job{mockJob("web2"), mockJob("web"), mockJob("api"), mockJobIn("prod", "web")} {
		upsertJob(t, s, uint64(10+i), job)
	}
	cases := []struct {
		name      string
		namespace string
		prefix    string
		want      []string
	}{
		{name: "namespace", namespace: "default", want: []string{"default/api", "default/web", "default/web2"}},
		{name: "namespace prefix", namespace: "default", prefix: "web", want: []string{"default/web", "default/web2"}},
		{name: "exact prefix", namespace: "default", prefix: "web2", want: []string{"default/web2"}},
		{name: "other namespace", namespace: "prod", want: []string{"prod/web"}},
		{name: "all namespaces", namespace: "*", want: []string{"default/api", "default/web", "default/web2", "prod/web"}},
		{name: "all namespaces prefix", namespace: "*", prefix: "web", want: []string{"default/web", "default/web2", "prod/web"}},
		{name: "no match", namespace: "default", prefix: "zzz"},
		{name: "unknown namespace", namespace: "nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := s.Jobs(nil, tc.namespace, tc.prefix)
			must.NoError(t, err)
			var got []string
			for _, j := range jobs {
				got = append(got, j.NamespacedID().String())
			}
			must.Eq(t, tc.want, got)
		})
	}
}

func TestStateStore_UpsertJob_NamespaceMustExist(t *testing.T) {
	s := testStateStore(t)
	err := applyRegister(s, 10, nil, mockJobIn("prod", "web"), nil)
	mustCode(t, 400, err)
	must.StrContains(t, err.Error(), `"prod"`)
	must.Eq(t, uint64(0), s.Index(tableJobs))

	upsertNamespaces(t, s, 11, "prod")
	upsertJob(t, s, 12, mockJobIn("prod", "web"))
	job, err := s.JobByID(nil, "prod", "web")
	must.NoError(t, err)
	must.NotNil(t, job)
}

func TestSpecChanged(t *testing.T) {
	cases := []struct {
		name   string
		modify func(j *structs.Job)
		want   bool
	}{
		{name: "same", modify: func(*structs.Job) {}},
		{name: "indexes", modify: func(j *structs.Job) { j.CreateIndex, j.ModifyIndex, j.JobModifyIndex = 1, 2, 3 }},
		{name: "stable and tag", modify: func(j *structs.Job) { j.Stable = true; j.VersionTag = &structs.JobVersionTag{Name: "x"} }},
		{name: "stop", modify: func(j *structs.Job) { j.Stop = true }, want: true},
		{name: "datacenters", modify: func(j *structs.Job) { j.Datacenters = []string{"dc2"} }, want: true},
		{name: "task config", modify: func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Config["image"] = "nginx:1.28" }, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := mockJob("web"), mockJob("web")
			tc.modify(b)
			must.Eq(t, tc.want, SpecChanged(a, b))
			// SpecChanged must not clear the fields it ignores on its arguments.
			must.Eq(t, mockJob("web"), a)
		})
	}
}
