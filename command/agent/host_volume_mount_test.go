package agent

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// A volume_mount of a volume its group does not declare could run on no node: register
// refuses it with a 400 naming the field.
func TestJobRegister_VolumeMountOfUndeclaredVolume(t *testing.T) {
	ta := NewTestAgent(t, nil)
	jobs := ta.Client("").Jobs()

	job := testJob("vol")
	job.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}}
	job.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{{Volume: new("other"), Destination: new("/srv")}}
	_, _, err := jobs.Register(job, nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, `volume_mount 1: volume "other" is not declared by the group's volume blocks`)

	job.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{{Volume: new("data"), Destination: new("../../etc")}}
	_, _, err = jobs.Register(job, nil)
	must.ErrorContains(t, err, "400")
	must.ErrorContains(t, err, `volume_mount 1: destination "../../etc" must not contain a ".." segment`)

	job.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{{Volume: new("data"), Destination: new("/srv/data")}}
	reg, _, err := jobs.Register(job, nil)
	must.NoError(t, err)
	must.Eq(t, "", reg.Warnings)
}
