package nomad

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// pipeListener hands out the server ends of in-memory connections, as a client's streams.
type pipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) dial() (net.Conn, error) {
	a, b := net.Pipe()
	select {
	case l.conns <- b:
		return a, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }

// TestAllocMigrateData_RelaysChunksToTheReplacingNode: the node whose allocation replaces
// one with a migrating disk gets that allocation's snapshot from the previous node's client,
// in chunks that join up; another node's secret is refused, and so is an allocation that
// no allocation of the caller replaces.
func TestAllocMigrateData_RelaysChunksToTheReplacingNode(t *testing.T) {
	srv := rpcServer(t, nil)
	sess := clientConn(t, srv)
	newNode, oldNode, other := testNode("new"), testNode("old"), testNode("other")
	must.NoError(t, registerOverConn(t, sess, newNode, newNode.SecretID))
	must.NoError(t, registerOverConn(t, clientConn(t, srv), oldNode, oldNode.SecretID))
	otherSess := clientConn(t, srv)
	must.NoError(t, registerOverConn(t, otherSess, other, other.SecretID))
	job := mock.Job()
	job.TaskGroups[0].EphemeralDisk = &api.EphemeralDisk{Migrate: new(true), SizeMB: new(20)}
	registerJob(t, srv, "", job)
	stored, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	testPlaceAllocs(t, srv, stored,
		&structs.Allocation{ID: "a-old", Name: "web.web[0]", TaskGroup: "web", NodeID: oldNode.ID},
		&structs.Allocation{ID: "a-new", Name: "web.web[0]", TaskGroup: "web", NodeID: newNode.ID, PreviousAllocation: "a-old"},
		&structs.Allocation{ID: "a-unrelated", Name: "web.web[1]", TaskGroup: "web", NodeID: oldNode.ID})

	// The previous node's client: a snapshot a chunk and some long, served by range.
	snapshot := bytes.Repeat([]byte("0123456789abcdef"), (structs.AllocMigrateChunkSize+100)/16)
	ln := newPipeListener()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/client/allocation/a-old/snapshot" {
			http.Error(w, "no such allocation", http.StatusNotFound)
			return
		}
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		must.Eq(t, strconv.Itoa(20<<20), r.URL.Query().Get("max"))
		_, _ = w.Write(snapshot[min(off, len(snapshot)):min(off+limit, len(snapshot))])
	})}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Shutdown(context.Background()); _ = ln.Close() })
	srv.ServeLocalNode(oldNode.ID, ln.dial)

	var got []byte
	for i := 0; ; i++ {
		must.Less(t, 5, i, must.Sprint("the chunks never ended"))
		var reply structs.AllocMigrateDataResponse
		err := clientRPC(t, sess, "Alloc.MigrateData", &structs.AllocMigrateDataRequest{
			AllocID: "a-old", NodeID: newNode.ID, Offset: int64(len(got)),
			QueryOptions: structs.QueryOptions{AuthToken: newNode.SecretID, AllowStale: true}}, &reply)
		must.NoError(t, err)
		must.LessEq(t, structs.AllocMigrateChunkSize, len(reply.Data))
		got = append(got, reply.Data...)
		if reply.EOF {
			break
		}
	}
	must.True(t, bytes.Equal(snapshot, got), must.Sprintf("got %d bytes, want %d", len(got), len(snapshot)))

	refused := []struct {
		name    string
		node    *structs.Node
		allocID string
		token   string
	}{
		{"another node", other, "a-old", other.SecretID},
		{"an allocation nobody replaces", newNode, "a-unrelated", newNode.SecretID},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			var reply structs.AllocMigrateDataResponse
			err := clientRPC(t, sess, "Alloc.MigrateData", &structs.AllocMigrateDataRequest{
				AllocID: tc.allocID, NodeID: tc.node.ID,
				QueryOptions: structs.QueryOptions{AuthToken: tc.token, AllowStale: true}}, &reply)
			mustCode(t, 403, err)
			must.StrHasPrefix(t, "Permission denied", err.Error())
			must.SliceEmpty(t, reply.Data)
		})
	}
}

// TestAllocMigrateData_OperatorNeedsReadFS: with a token, the allocation's namespace must
// grant read-fs; read-job alone is refused.
func TestAllocMigrateData_OperatorNeedsReadFS(t *testing.T) {
	srv, root := testACLServer(t, nil)
	registerJob(t, srv, root, mock.Job())
	stored, err := srv.State().JobByID(nil, structs.DefaultNamespace, "web")
	must.NoError(t, err)
	testPlaceAllocs(t, srv, stored, &structs.Allocation{ID: "a-old", Name: "web.web[0]", TaskGroup: "web", NodeID: "gone"})
	readJob := clientToken(t, srv, root, "reader", `namespace "default" { capabilities = ["read-job"] }`)
	readFS := clientToken(t, srv, root, "fs", `namespace "default" { capabilities = ["read-fs"] }`)

	call := func(token string) error {
		var reply structs.AllocMigrateDataResponse
		return srv.Endpoints.Alloc.MigrateData(&structs.AllocMigrateDataRequest{AllocID: "a-old",
			QueryOptions: structs.QueryOptions{AuthToken: token}}, &reply)
	}
	err = call("not-a-token")
	mustCode(t, 403, err)
	err = call(readJob.SecretID)
	mustCode(t, 403, err)
	must.StrContains(t, err.Error(), "read-fs")
	// Allowed; the node is not connected, which is what it then says.
	mustCode(t, 503, call(readFS.SecretID))
}
