package nomad

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// The replay of issue 19 item 5 at a smaller scale: versions with a large meta are accepted
// one by one until all the versions the server would keep exceed job_max_total_size; then the
// registration is a 400 naming the limit and nothing is written. Versions that leave the
// window stop counting, and a tagged version keeps counting.
func TestSecurity_JobTotalSizeBounded(t *testing.T) {
	const limit = 1 << 20
	bigJob := func(rev int, size int) *structs.Job {
		job := mock.Job()
		job.Meta = map[string]string{"rev": fmt.Sprint(rev), "blob": strings.Repeat("x", size)}
		return job
	}
	register := func(srv *Server, job *structs.Job) error {
		var reply structs.JobRegisterResponse
		return srv.Endpoints.Job.Register(&structs.JobRegisterRequest{Job: job,
			WriteRequest: structs.WriteRequest{Namespace: job.Namespace}}, &reply)
	}
	const wantErr = `above job_max_total_size (1.0 MiB)`

	cases := []struct {
		name string
		run  func(t *testing.T, srv *Server)
	}{
		{
			name: "one version above the limit",
			run: func(t *testing.T, srv *Server) {
				err := register(srv, bigJob(0, limit))
				must.ErrorContains(t, err, `job "web" would store`)
				must.ErrorContains(t, err, wantErr)
				must.Eq(t, 400, structs.ErrorCode(err))
			},
		},
		{
			name: "versions add up until the window is full",
			run: func(t *testing.T, srv *Server) {
				// 300 KiB each: three fit in 1 MiB, the fourth does not while all four are kept.
				for i := 0; i < 3; i++ {
					must.NoError(t, register(srv, bigJob(i, 300<<10)))
				}
				before := srv.State().LatestIndex()
				err := register(srv, bigJob(3, 300<<10))
				must.ErrorContains(t, err, "in 4 version(s)")
				must.ErrorContains(t, err, wantErr)
				must.Eq(t, 400, structs.ErrorCode(err))
				must.Eq(t, before, srv.State().LatestIndex(), must.Sprint("a refused register writes nothing"))
				// A small version fits beside the three big ones.
				must.NoError(t, register(srv, bigJob(4, 10)))
			},
		},
		{
			name: "an unchanged spec replaces its version",
			run: func(t *testing.T, srv *Server) {
				for i := 0; i < 3; i++ {
					must.NoError(t, register(srv, bigJob(i, 300<<10)))
				}
				must.NoError(t, register(srv, bigJob(2, 300<<10)))
			},
		},
		{
			name: "versions pruned by the window stop counting, tagged ones do not",
			run: func(t *testing.T, srv *Server) {
				// The window is 2 versions here: registering big versions goes on for ever...
				for i := 0; i < 5; i++ {
					must.NoError(t, register(srv, bigJob(i, 400<<10)))
				}
				// ...until one is tagged and kept beside the window.
				var reply structs.JobTagResponse
				must.NoError(t, srv.Endpoints.Job.TagVersion(&structs.JobTagRequest{JobID: "web", Name: "keep",
					WriteRequest: structs.WriteRequest{Namespace: "default"}}, &reply))
				must.NoError(t, register(srv, bigJob(5, 10)))
				must.NoError(t, register(srv, bigJob(6, 400<<10)))
				// Two big versions in the window fitted before; with the tagged one, they do not.
				err := register(srv, bigJob(7, 400<<10))
				must.ErrorContains(t, err, "in 3 version(s)")
				must.ErrorContains(t, err, wantErr)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := testServer(t, func(c *Config) {
				c.JobMaxTotalSize = limit
				if strings.HasPrefix(tc.name, "versions pruned") {
					c.JobTrackedVersions = 2
				}
			})
			tc.run(t, srv)
		})
	}
}

// The cache answers a stored row's size without encoding it again, and forgets the row once
// it is collected, so it never grows with versions the store has let go.
func TestJobSizeCache(t *testing.T) {
	var c jobSizeCache
	job := mock.Job()
	want, err := job.EncodedSize()
	must.NoError(t, err)
	got, err := c.size(job)
	must.NoError(t, err)
	must.Eq(t, want, got)

	c.mu.Lock()
	must.MapLen(t, 1, c.m)
	c.mu.Unlock()

	func() {
		other := mock.JobWithID("gone")
		_, err := c.size(other)
		must.NoError(t, err)
	}()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		runtime.GC()
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.m) == 1
	}), wait.Timeout(5*time.Second), wait.Gap(10*time.Millisecond)))
	runtime.KeepAlive(job)
}
