package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/nomadfork/nomad/client/allocdir"
)

// DefaultInfraImage is upstream's default infra_image: the pause container of a bridge-mode
// allocation with docker tasks.
const DefaultInfraImage = "registry.k8s.io/pause-amd64:3.3"

// labelSandbox marks a pause container with the allocation it holds the namespace of. Pause
// containers do not carry labelAllocRoot: RemoveDangling, which runs before the client knows
// which networks it keeps, leaves them to RemoveSandboxes.
const (
	labelSandbox     = "com.nomadfork.sandbox_alloc_id"
	labelSandboxRoot = "com.nomadfork.sandbox_alloc_root"
)

func sandboxName(allocID string) string { return "nomad_init_" + allocID }

func (d *Driver) infraImage() string {
	if d.opts.InfraImage != "" {
		return d.opts.InfraImage
	}
	return DefaultInfraImage
}

// CreateSandbox implements drivers.NetworkSandboxer: it starts (or finds running) the
// allocation's pause container, in a network namespace of its own with no interface but lo,
// and returns the path of that namespace, which the client attaches to the bridge.
func (d *Driver) CreateSandbox(ctx context.Context, allocID string) (string, error) {
	if d.err != nil {
		return "", fmt.Errorf("docker: no client: %w", d.err)
	}
	if err := allocdir.CheckElem(allocID); err != nil {
		return "", err
	}
	name := sandboxName(allocID)
	if insp, err := d.cli.ContainerInspect(ctx, name); err == nil && insp.State != nil && insp.State.Running && insp.State.Pid > 0 {
		return "/proc/" + strconv.Itoa(insp.State.Pid) + "/ns/net", nil
	}
	_ = d.cli.ContainerRemove(ctx, name, container.RemoveOptions{Force: true})
	img := d.infraImage()
	if _, err := d.cli.ImageInspect(ctx, img); err != nil {
		rc, err := d.cli.ImagePull(ctx, img, image.PullOptions{})
		if err != nil {
			return "", fmt.Errorf("docker: pulling infra_image %q: %w", img, err)
		}
		_, _ = io.Copy(io.Discard, rc)
		_ = rc.Close()
		if _, err := d.cli.ImageInspect(ctx, img); err != nil {
			return "", fmt.Errorf("docker: infra_image %q not available after its pull: %w", img, err)
		}
	}
	created, err := d.cli.ContainerCreate(ctx,
		&container.Config{Image: img, Labels: map[string]string{labelSandbox: allocID, labelSandboxRoot: d.opts.AllocRoot, labelAllocID: allocID}},
		&container.HostConfig{NetworkMode: "none", RestartPolicy: container.RestartPolicy{Name: "no"}}, nil, nil, name)
	if err != nil {
		return "", fmt.Errorf("docker: creating the pause container: %w", err)
	}
	if err := d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		_ = d.cli.ContainerRemove(ctx, created.ID, container.RemoveOptions{Force: true})
		return "", fmt.Errorf("docker: starting the pause container: %w", err)
	}
	insp, err := d.cli.ContainerInspect(ctx, created.ID)
	if err != nil || insp.State == nil || !insp.State.Running || insp.State.Pid <= 0 {
		_ = d.cli.ContainerRemove(ctx, created.ID, container.RemoveOptions{Force: true})
		if err == nil {
			err = errors.New("it is not running")
		}
		return "", fmt.Errorf("docker: the pause container of infra_image %q: %w", img, err)
	}
	return "/proc/" + strconv.Itoa(insp.State.Pid) + "/ns/net", nil
}

// sandboxID is the ID of the allocation's running pause container.
func (d *Driver) sandboxID(ctx context.Context, allocID string) (string, error) {
	insp, err := d.cli.ContainerInspect(ctx, sandboxName(allocID))
	if err != nil || insp.State == nil || !insp.State.Running {
		return "", fmt.Errorf("docker: the allocation's pause container is not running (bridge mode): %v", err)
	}
	return insp.ID, nil
}

// DestroySandbox implements drivers.NetworkSandboxer: it removes the allocation's pause
// container; one already gone is not an error.
func (d *Driver) DestroySandbox(ctx context.Context, allocID string) error {
	if d.err != nil {
		return d.err
	}
	err := d.cli.ContainerRemove(ctx, sandboxName(allocID), container.RemoveOptions{Force: true})
	if err != nil && !client.IsErrNotFound(err) {
		return fmt.Errorf("docker: removing the pause container: %w", err)
	}
	return nil
}

// RemoveSandboxes implements drivers.NetworkSandboxer: it removes this agent's pause
// containers of the allocations keep does not name.
func (d *Driver) RemoveSandboxes(ctx context.Context, keep func(allocID string) bool) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.opts.AllocRoot == "" {
		return 0, nil
	}
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", labelSandboxRoot+"="+d.opts.AllocRoot))})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ctr := range list {
		if keep(ctr.Labels[labelSandbox]) {
			continue
		}
		if err := d.cli.ContainerRemove(ctx, ctr.ID, container.RemoveOptions{Force: true}); err == nil {
			n++
		}
	}
	return n, nil
}
