package nomad

import (
	"net/http"
	"reflect"

	"github.com/nomadfork/nomad/structs"
)

// RPC runs the declared row method in-process, through the same pipeline as a call over the
// network: the HTTP API of a server agent calls every row through it, and a client-only
// agent's HTTP API sends the same calls over its connection (apiRow), so the two differ only
// in transport. args and reply are the row's own request and answer types.
func (s *Server) RPC(method string, args, reply any) error {
	row, ok := routeTable[method]
	if !ok {
		return structs.NewErrCode(http.StatusInternalServerError, "unknown RPC method %q", method)
	}
	// A caller passing another row's types is a bug of the caller's, said rather than a panic.
	if reflect.TypeOf(args) != reflect.TypeOf(row.newArgs()) || reflect.TypeOf(reply) != reflect.TypeOf(row.newReply()) {
		return structs.NewErrCode(http.StatusInternalServerError, "RPC %s called with %T and %T", method, args, reply)
	}
	return row.callAny(s, args, reply)
}

// apiRow is the row a client agent's connection may call on behalf of its HTTP API: any row
// whose caller proves itself with an ACL token (or needs none), which the row's pipeline
// resolves from the token the request carries, as it would for a request sent to this
// server's HTTP API. A node's own calls (callerNode) are not reachable this way: the
// connection's explicit clientMethods cover them.
func apiRow(method string) (endpoint, bool) {
	row, ok := routeTable[method]
	if !ok || row.Caller() == callerNode {
		return nil, false
	}
	return row, true
}
