package agent

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
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

// Through a client agent: an exec task reads the node's host_volume at its destination and
// cannot write where the group asked for read_only; a raw_exec task with a mount fails with
// an event saying why.
func TestHostVolumes_MountedThroughAgent(t *testing.T) {
	requireExecDriver(t)
	dir := t.TempDir()
	must.NoError(t, os.Chmod(dir, 0o755))
	must.NoError(t, os.WriteFile(filepath.Join(dir, "greeting"), []byte("from the host"), 0o644))
	ta := NewTestClientAgent(t, func(c *Config) {
		c.Client.HostVolumes = []*HostVolumeConfig{{Name: "shared", Path: dir}}
	})
	c := ta.Client("")

	job := execBatchJob("vol", 64, map[string]any{
		"command": "/bin/sh", "args": []string{"-c", `cat /srv/data/greeting; echo; touch /srv/data/new 2>/dev/null && echo write=ok || echo write=refused`},
	})
	job.TaskGroups[0].Volumes = map[string]*api.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared", ReadOnly: true}}
	job.TaskGroups[0].Tasks[0].VolumeMounts = []*api.VolumeMount{{Volume: new("data"), Destination: new("/srv/data")}}
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "vol", map[string]int{"complete": 1})
	res := doHTTP(t, ta, "GET", logsPath(allocs[0].ID, url.Values{"task": {"box"}, "type": {"stdout"}, "plain": {"true"}}), nil, nil)
	must.Eq(t, "from the host\nwrite=refused\n", res.body)
	must.FileNotExists(t, filepath.Join(dir, "new"))

	raw := execBatchJob("rawvol", 64, map[string]any{"command": "/bin/true"})
	raw.TaskGroups[0].Tasks[0].Driver = "raw_exec"
	raw.TaskGroups[0].Volumes = job.TaskGroups[0].Volumes
	raw.TaskGroups[0].Tasks[0].VolumeMounts = job.TaskGroups[0].Tasks[0].VolumeMounts
	_, _, err = c.Jobs().Register(raw, nil)
	must.NoError(t, err)
	allocs = allocsIn(t, c, "rawvol", map[string]int{"failed": 1})
	var msgs []string
	for _, e := range taskEvents(t, c, allocs[0].ID, "box") {
		msgs = append(msgs, e.Type+": "+e.DisplayMessage+e.Message)
	}
	must.StrContains(t, strings.Join(msgs, "\n"), `driver "raw_exec" does not support volume_mount`)
}
