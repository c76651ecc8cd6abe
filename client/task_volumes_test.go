package client

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestTaskMounts(t *testing.T) {
	host := map[string]*api.HostVolumeInfo{
		"shared": {Path: "/srv/shared"},
		"ro":     {Path: "/srv/ro", ReadOnly: true},
	}
	tg := &api.TaskGroup{Volumes: map[string]*api.VolumeRequest{
		"data":   {Name: "data", Type: "host", Source: "shared"},
		"gro":    {Name: "gro", Type: "host", Source: "shared", ReadOnly: true},
		"nodero": {Name: "nodero", Source: "ro", ReadOnly: true},
		"absent": {Name: "absent", Type: "host", Source: "nowhere"},
		"csi":    {Name: "csi", Type: "csi", Source: "x"},
	}}
	mount := func(vol, dest string, ro *bool) *api.Task {
		return &api.Task{VolumeMounts: []*api.VolumeMount{{Volume: new(vol), Destination: new(dest), ReadOnly: ro}}}
	}
	cases := []struct {
		name    string
		task    *api.Task
		want    drivers.Mount
		wantErr string
	}{
		{name: "writable", task: mount("data", "/data", nil),
			want: drivers.Mount{Volume: "data", HostPath: "/srv/shared", TaskPath: "/data"}},
		{name: "relative destination is made absolute", task: mount("data", "srv/./data/", nil),
			want: drivers.Mount{Volume: "data", HostPath: "/srv/shared", TaskPath: "/srv/data"}},
		{name: "mount read_only", task: mount("data", "/data", new(true)),
			want: drivers.Mount{Volume: "data", HostPath: "/srv/shared", TaskPath: "/data", ReadOnly: true}},
		{name: "group read_only wins over the mount", task: mount("gro", "/data", new(false)),
			want: drivers.Mount{Volume: "gro", HostPath: "/srv/shared", TaskPath: "/data", ReadOnly: true}},
		{name: "client read_only", task: mount("nodero", "/data", nil),
			want: drivers.Mount{Volume: "nodero", HostPath: "/srv/ro", TaskPath: "/data", ReadOnly: true}},
		{name: "node lacks the volume", task: mount("absent", "/data", nil), wantErr: `this node has no host_volume "nowhere"`},
		{name: "undeclared", task: mount("other", "/data", nil), wantErr: `volume "other" is not declared`},
		{name: "csi", task: mount("csi", "/data", nil), wantErr: `only host volumes can be mounted`},
		{name: "dot-dot", task: mount("data", "/a/../../etc", nil), wantErr: `must not contain a ".." segment`},
		{name: "root", task: mount("data", "/", nil), wantErr: `would cover the task's whole root`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := taskMounts(tg, tc.task, host)
			if tc.wantErr != "" {
				must.ErrorContains(t, err, tc.wantErr)
				return
			}
			must.NoError(t, err)
			must.Eq(t, []drivers.Mount{tc.want}, got)
		})
	}
}

// A driver that cannot mount fails the task with an event saying so; it is not started
// without its volume.
func TestClient_VolumeMountRefusedByDriverWithoutMounts(t *testing.T) {
	c, s := testClient(t)
	c.config.HostVolumes = map[string]*api.HostVolumeInfo{"shared": {Path: t.TempDir()}}
	task := mockTask("t", map[string]any{"run_for": "10ms"})
	task.VolumeMounts = []*api.VolumeMount{{Volume: new("data"), Destination: new("/data")}}
	alloc := testAlloc("a1", structs.JobTypeBatch, task)
	alloc.Job.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}}
	s.setAllocs(alloc)
	waitFor(t, "failed", reportedStatus(s, "a1", structs.AllocClientStatusFailed))
	ts := s.lastReport("a1").TaskStates["t"]
	must.True(t, ts.Failed)
	found := false
	for _, e := range ts.Events {
		if e.Type == structs.TaskEventSetupFailure {
			must.StrContains(t, e.Message, `driver "mock_driver" does not support volume_mount`)
			found = true
		}
	}
	must.True(t, found, must.Sprint("no setup failure event"))
}
