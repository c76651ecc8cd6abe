package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestAllocMigrateData_ThroughTheClientStream: the server's Alloc.MigrateData reaches the
// client that ran the allocation over its stream and answers with its disk snapshot: a
// gzipped tar of alloc/data and the task's local/, without the logs or secrets.
func TestAllocMigrateData_ThroughTheClientStream(t *testing.T) {
	ta := NewTestClientAgent(t, nil)
	c := ta.Client("")
	job := api.NewBatchJob("keep", "keep", "global", 50)
	tg := api.NewTaskGroup("g", 1).AddTask(api.NewTask("w", "raw_exec").SetConfig("command", "/bin/sh").SetConfig("args",
		[]string{"-c", `echo data > "$NOMAD_ALLOC_DIR/data/state"; echo cache > "$NOMAD_TASK_DIR/cache"; echo token > "$NOMAD_SECRETS_DIR/x"; echo logged`}))
	tg.EphemeralDisk = &api.EphemeralDisk{Migrate: new(true), SizeMB: new(10)}
	job.AddTaskGroup(tg)
	_, _, err := c.Jobs().Register(job, nil)
	must.NoError(t, err)
	allocs := allocsIn(t, c, "keep", map[string]int{"complete": 1})

	var reply structs.AllocMigrateDataResponse
	must.NoError(t, ta.Server().Endpoints.Alloc.MigrateData(&structs.AllocMigrateDataRequest{AllocID: allocs[0].ID}, &reply))
	must.True(t, reply.EOF)
	gz, err := gzip.NewReader(bytes.NewReader(reply.Data))
	must.NoError(t, err)
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must.NoError(t, err)
		body, err := io.ReadAll(tr)
		must.NoError(t, err)
		files[hdr.Name] = string(body)
	}
	must.Eq(t, "data\n", files["alloc/data/state"])
	must.Eq(t, "cache\n", files["w/local/cache"])
	for name := range files {
		must.True(t, name == "alloc/data/" || name == "w/local/" || strings.HasPrefix(name, "alloc/data/") || strings.HasPrefix(name, "w/local/"),
			must.Sprintf("only alloc/data and local/ are in a snapshot: %s", name))
	}

	err = ta.Server().Endpoints.Alloc.MigrateData(&structs.AllocMigrateDataRequest{AllocID: "no-such-alloc"}, &reply)
	must.Eq(t, 404, structs.ErrorCode(err))
}
