package structs

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

func TestJobValidate_VolumeMount(t *testing.T) {
	cases := []struct {
		name    string
		vols    map[string]*api.VolumeRequest
		mount   *api.VolumeMount
		wantErr string // "" when valid
	}{
		{name: "declared host volume",
			vols:  map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}},
			mount: &api.VolumeMount{Volume: new("data"), Destination: new("/srv/data")}},
		{name: "undeclared volume",
			vols:    map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}},
			mount:   &api.VolumeMount{Volume: new("other"), Destination: new("/srv/data")},
			wantErr: `task "t": volume_mount 1: volume "other" is not declared by the group's volume blocks`},
		{name: "no volume", mount: &api.VolumeMount{Destination: new("/srv")},
			wantErr: `volume_mount 1: volume is required`},
		{name: "no destination",
			vols:    map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}},
			mount:   &api.VolumeMount{Volume: new("data")},
			wantErr: `volume_mount 1: destination is required`},
		{name: "destination climbs out",
			vols:    map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}},
			mount:   &api.VolumeMount{Volume: new("data"), Destination: new("/srv/../../etc")},
			wantErr: `destination "/srv/../../etc" must not contain a ".." segment`},
		{name: "destination is the root",
			vols:    map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}},
			mount:   &api.VolumeMount{Volume: new("data"), Destination: new("/.")},
			wantErr: `destination "/." must not be the task's root`},
		{name: "host volume without source",
			vols:    map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host"}},
			mount:   &api.VolumeMount{Volume: new("data"), Destination: new("/srv")},
			wantErr: `group "g": volume "data": source is required for a host volume`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			j.TaskGroups[0].Volumes = tc.vols
			j.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{tc.mount}
			err := j.Validate()
			if tc.wantErr == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}
