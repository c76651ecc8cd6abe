package client

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers"
	"github.com/nomadfork/nomad/client/drivers/docker"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func httpStatus(url string) (int, error) {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// TestDocker_BridgeMode (docker test gate): a docker task of a bridge-mode allocation runs in
// the namespace of the allocation's pause container (infra_image), which the client attached
// to the bridge: reached through the mapped host port and at the allocation's address on the
// port inside; its dns block is its /etc/resolv.conf. A stop removes the network and the
// pause container.
func TestDocker_BridgeMode(t *testing.T) {
	cli := dockertest.Client(t)
	dockertest.BuildPauseImage(t, cli)
	e := newBridgeEnv(t, "nfcnic3", "172.26.103.0/24")
	hostPort := hostFreePort(t)
	task := &api.Task{Name: "web", Driver: "docker", Config: map[string]any{
		"image": dockertest.Image, "args": []any{"httpd", "-p", "8080", "-h", "/etc"}}}
	a := testAlloc("b1e0a7c2-0000-4000-8000-000000000021", structs.JobTypeService, task)
	a.Job.TaskGroups[0].Networks = []*api.NetworkResource{{Mode: "bridge",
		ReservedPorts: []api.Port{{Label: "http", Value: hostPort, To: 8080}},
		DNS:           &api.DNSConfig{Servers: []string{"192.0.2.53"}}}}
	a.AllocatedResources = &api.AllocatedResources{Shared: api.AllocatedSharedResources{
		Ports: []api.PortMapping{{Label: "http", Value: hostPort, To: 8080}}}}
	d := docker.New(docker.Options{AllocRoot: e.allocs, InfraImage: dockertest.PauseImage})
	c, s := e.start([]drivers.Driver{d}, a)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cli.ContainerRemove(ctx, "web-"+a.ID, container.RemoveOptions{Force: true})
		_ = cli.ContainerRemove(ctx, "nomad_init_"+a.ID, container.RemoveOptions{Force: true})
	})
	waitFor(t, "running", reportedStatus(s, a.ID, structs.AllocClientStatusRunning))
	st := s.lastReport(a.ID).NetworkStatus
	_, cidr, _ := net.ParseCIDR(e.subnet)
	must.True(t, cidr.Contains(net.ParseIP(st.Address)), must.Sprintf("address %q", st.Address))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pause, err := cli.ContainerInspect(ctx, "nomad_init_"+a.ID)
	must.NoError(t, err)
	web, err := cli.ContainerInspect(ctx, containerOf(c, a.ID, "web"))
	must.NoError(t, err)
	must.Eq(t, "container:"+pause.ID, string(web.HostConfig.NetworkMode))

	waitFor(t, "the task to answer through the host port", func() bool {
		code, err := httpStatus(fmt.Sprintf("http://127.0.0.1:%d/hostname", hostPort))
		return err == nil && code == 200
	})
	code, err := httpStatus(fmt.Sprintf("http://%s:8080/hostname", st.Address))
	must.NoError(t, err)
	must.Eq(t, 200, code)
	// The task's /etc/resolv.conf is the allocation's.
	resolv, err := os.ReadFile(filepath.Join(e.allocs, a.ID, "resolv.conf"))
	must.NoError(t, err)
	must.Eq(t, "nameserver 192.0.2.53\n", string(resolv))
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(fmt.Sprintf("http://127.0.0.1:%d/resolv.conf", hostPort))
	must.NoError(t, err)
	body := make([]byte, 256)
	n, _ := resp.Body.Read(body)
	_ = resp.Body.Close()
	must.Eq(t, string(resolv), string(body[:n]))

	stopped := *a
	stopped.DesiredStatus, stopped.AllocModifyIndex = structs.AllocDesiredStatusStop, 2
	s.setAllocs(&stopped)
	waitFor(t, "complete", reportedStatus(s, a.ID, structs.AllocClientStatusComplete))
	e.checkTornDown(a.ID, st.Address)
	waitFor(t, "the pause container to go", func() bool {
		_, err := cli.ContainerInspect(ctx, "nomad_init_"+a.ID)
		return err != nil
	})
}
