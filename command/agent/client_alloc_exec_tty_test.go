package agent

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/client/drivers/docker/dockertest"
	"github.com/shoenig/test/must"
)

// execWithSize runs command with a terminal through the official client, which sends size
// as a tty_size frame.
func execWithSize(t *testing.T, c *api.Client, alloc *api.Allocation, task string, size api.TerminalSize, command ...string) execResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sizes := make(chan api.TerminalSize, 1)
	sizes <- size
	var stdout, stderr bytes.Buffer
	code, err := c.Allocations().Exec(ctx, alloc, task, true, command, strings.NewReader(""), &stdout, &stderr, sizes, nil)
	return execResult{code: code, err: err, stdout: stdout.String(), stderr: stderr.String()}
}

func TestClientAllocExec_TTYSizeFrames(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	alloc := runningAlloc(t, c, testJob("web"))
	// The size frame may arrive after the start: the command waits until its terminal has it.
	res := execWithSize(t, c, alloc, "sleep", api.TerminalSize{Height: 33, Width: 111}, "/bin/sh", "-c",
		`while [ "$(stty size)" != "33 111" ]; do sleep 0.01; done; tty; stty size; exit 4`)
	must.NoError(t, res.err)
	must.Eq(t, 4, res.code)
	must.StrContains(t, res.stdout, "/dev/pts/")
	must.StrContains(t, res.stdout, "33 111")
}

func TestClientAllocExec_Docker(t *testing.T) {
	cli := dockertest.Client(t)
	dockertest.BuildImage(t, cli)
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := api.NewServiceJob("box", "box", "global", 50)
	job.Datacenters = []string{"dc1"}
	task := api.NewTask("box", "docker").
		SetConfig("image", dockertest.Image).
		SetConfig("args", []string{"sleep"})
	task.Resources = &api.Resources{CPU: new(50), MemoryMB: new(32)}
	job.AddTaskGroup(api.NewTaskGroup("box", 1).AddTask(task))
	alloc := runningAlloc(t, c, job)
	t.Cleanup(func() {
		list, _ := cli.ContainerList(context.Background(), container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", "com.hashicorp.nomad.alloc_id="+alloc.ID))})
		for _, ctr := range list {
			_ = cli.ContainerRemove(context.Background(), ctr.ID, container.RemoveOptions{Force: true})
		}
	})

	t.Run("exit code and output", func(t *testing.T) {
		res := execOfficial(t, c, alloc, "box", false, "", "/taskbin", "echo", "inside")
		must.NoError(t, res.err)
		must.Eq(t, 0, res.code)
		must.Eq(t, "inside\n", res.stdout)
		res = execOfficial(t, c, alloc, "box", false, "", "/taskbin", "exit", "9")
		must.NoError(t, res.err)
		must.Eq(t, 9, res.code)
	})
	t.Run("terminal of the size sent", func(t *testing.T) {
		res := execWithSize(t, c, alloc, "box", api.TerminalSize{Height: 20, Width: 100}, "/taskbin", "tty", "100x20")
		must.NoError(t, res.err)
		must.Eq(t, 0, res.code)
		must.StrContains(t, res.stdout, "tty 100x20")
	})
}
