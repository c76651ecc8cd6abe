package nomad

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

// migrateFetchTimeout bounds one chunk's trip to the previous node's client, within the
// client's own bound on the call (client.rpcCallTimeout).
const migrateFetchTimeout = 40 * time.Second

// allocMigrateData relays a chunk of an allocation's disk snapshot from the client of the
// node that ran it (client/alloc_migrate.go). A node may ask only for the allocation that one
// of its own allocations replaces with a migrating ephemeral disk: a node's secret opens no
// other allocation's files. An operator needs read-fs in the allocation's namespace.
var allocMigrateData = read("Alloc.MigrateData", spec[structs.AllocMigrateDataRequest, structs.AllocMigrateDataResponse]{
	Caller: callerNodeOrToken,
	Authorize: func(c *rpcCall, req *structs.AllocMigrateDataRequest) error {
		store := c.srv.State()
		alloc, err := store.AllocByID(nil, req.AllocID)
		if err != nil {
			return err
		}
		if req.NodeID != "" && c.token != "" && c.srv.authenticateNode(req.NodeID, c.token) == nil {
			if alloc != nil && nodeMigratesFrom(c.srv, req.NodeID, alloc.ID) {
				return nil
			}
			return structs.PermissionDenied("node %s runs no allocation that migrates the ephemeral disk of allocation %s", req.NodeID, req.AllocID)
		}
		if c.aclErr != nil {
			return c.aclErr
		}
		ns := structs.DefaultNamespace
		if alloc != nil {
			ns = alloc.Namespace
		}
		if c.acl.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadFS) {
			return nil
		}
		return structs.PermissionDenied("%s capability required in namespace %q", acl.NamespaceCapabilityReadFS, ns)
	},
	Validate: func(req *structs.AllocMigrateDataRequest) error {
		if req.AllocID == "" {
			return structs.BadRequest("AllocID: the allocation whose data is asked for is required")
		}
		if req.Offset < 0 {
			return structs.BadRequest("Offset: %d is negative", req.Offset)
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error {
		store := c.srv.State()
		alloc, err := store.AllocByID(nil, req.AllocID)
		if err != nil {
			return err
		}
		if alloc == nil {
			return structs.NotFound(structs.ErrAllocNotFound)
		}
		var maxBytes int64 = 300 << 20
		if alloc.Job != nil {
			if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil && tg.EphemeralDisk != nil && tg.EphemeralDisk.SizeMB != nil && *tg.EphemeralDisk.SizeMB > 0 {
				maxBytes = int64(*tg.EphemeralDisk.SizeMB) << 20
			}
		}
		data, err := fetchSnapshotChunk(c.srv, alloc, req.Offset, maxBytes)
		if err != nil {
			return err
		}
		reply.EOF = len(data) <= structs.AllocMigrateChunkSize
		reply.Data = data[:min(len(data), structs.AllocMigrateChunkSize)]
		reply.Index = store.Index("allocs")
		return nil
	},
})

// MigrateData answers one chunk of an allocation's disk snapshot, for the node that migrates
// it to a replacement.
func (a *Alloc) MigrateData(args *structs.AllocMigrateDataRequest, reply *structs.AllocMigrateDataResponse) error {
	return allocMigrateData.Call(a.srv, args, reply)
}

// nodeMigratesFrom reports whether node nodeID holds an allocation, still meant to run, that
// replaces prevID and whose group keeps its ephemeral disk.
func nodeMigratesFrom(s *Server, nodeID, prevID string) bool {
	allocs, err := s.State().AllocsByNode(nil, nodeID)
	if err != nil {
		return false
	}
	for _, a := range allocs {
		if a.PreviousAllocation != prevID || a.DesiredStatus != structs.AllocDesiredStatusRun || a.Job == nil {
			continue
		}
		if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil && keepsDisk(tg.EphemeralDisk) {
			return true
		}
	}
	return false
}

func keepsDisk(d *api.EphemeralDisk) bool {
	return d != nil && ((d.Migrate != nil && *d.Migrate) || (d.Sticky != nil && *d.Sticky))
}

// fetchSnapshotChunk reads up to one chunk and a byte from offset of the allocation's snapshot,
// from the client of its node: the byte past the chunk says whether more follows.
func fetchSnapshotChunk(s *Server, alloc *structs.Allocation, offset, maxBytes int64) ([]byte, error) {
	tr := &http.Transport{
		DialContext:       func(context.Context, string, string) (net.Conn, error) { return s.DialNode(alloc.NodeID) },
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: migrateFetchTimeout}
	q := url.Values{}
	q.Set("offset", strconv.FormatInt(offset, 10))
	q.Set("limit", strconv.Itoa(structs.AllocMigrateChunkSize+1))
	q.Set("max", strconv.FormatInt(maxBytes, 10))
	u := url.URL{Scheme: "http", Host: "node", Path: "/v1/client/allocation/" + url.PathEscape(alloc.ID) + "/snapshot", RawQuery: q.Encode()}
	resp, err := hc.Get(u.String())
	if err != nil {
		var coded *structs.CodedError
		if errors.As(err, &coded) {
			return nil, coded
		}
		return nil, structs.NewErrCode(http.StatusBadGateway, "reaching the client of node %s: %v", alloc.NodeID, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, structs.AllocMigrateChunkSize+1))
	if err != nil {
		return nil, structs.NewErrCode(http.StatusBadGateway, "reading from the client of node %s: %v", alloc.NodeID, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(body))
		if len(msg) > 512 {
			msg = msg[:512]
		}
		return nil, structs.NewErrCode(resp.StatusCode, "%s", fmt.Sprintf("node %s: %s", alloc.NodeID, msg))
	}
	return body, nil
}
