package nomad

import (
	"reflect"
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestEveryRPCIsDeclared: the dispatcher serves only declared calls, so an endpoint method
// of the RPC shape, func(*Args, *Reply) error, that is neither a row nor a peer call would be
// unreachable across servers. Every such method must be one, under its "Service.Method" name.
func TestEveryRPCIsDeclared(t *testing.T) {
	srv := testServer(t, nil)
	services := map[string]any{
		"Job": srv.Endpoints.Job, "Eval": srv.Endpoints.Eval, "Namespace": srv.Endpoints.Namespace,
		"ACL": srv.Endpoints.ACL, "PurgeHistory": srv.Endpoints.PurgeRecord, "System": srv.Endpoints.System,
		"Cluster": &Cluster{srv: srv}, "Node": srv.Endpoints.Node, "Alloc": srv.Endpoints.Alloc,
		"Keyring": srv.Endpoints.Keyring, "Deployment": srv.Endpoints.Deployment, "Operator": srv.Endpoints.Operator,
		"Variables": srv.Endpoints.Variables, "NodePool": srv.Endpoints.NodePool, "Search": srv.Endpoints.Search,
		"Scaling": srv.Endpoints.Scaling, "ServiceRegistration": srv.Endpoints.Services, "Volume": srv.Endpoints.Volume,
		"Status": srv.Endpoints.Status, "EventSink": srv.Endpoints.EventSink,
	}
	errorType := reflect.TypeFor[error]()
	var seen int
	for service, ep := range services {
		typ := reflect.TypeOf(ep)
		for i := 0; i < typ.NumMethod(); i++ {
			m := typ.Method(i)
			mt := m.Type
			if mt.NumIn() != 3 || mt.NumOut() != 1 || mt.Out(0) != errorType ||
				mt.In(1).Kind() != reflect.Pointer || mt.In(2).Kind() != reflect.Pointer {
				continue
			}
			name := service + "." + m.Name
			seen++
			row, isRow := routeTable[name]
			p, isPeer := peerTable[name]
			must.True(t, isRow || isPeer, must.Sprintf("%s is neither a row nor a peer call", name))
			var call endpointCall = p
			if isRow {
				call = row
			}
			must.Eq(t, mt.In(1).Elem(), reflect.TypeOf(call.newArgs()).Elem(), must.Sprintf("%s: request type", name))
			must.Eq(t, mt.In(2).Elem(), reflect.TypeOf(call.newReply()).Elem(), must.Sprintf("%s: answer type", name))
		}
	}
	must.Eq(t, len(routeTable)+len(peerTable), seen, must.Sprint("a declared call without its endpoint method"))
}

// TestPeerCalls_ServedOverRPC: the peer calls reach their methods through the dispatcher, and
// an undeclared method is a 400.
func TestPeerCalls_ServedOverRPC(t *testing.T) {
	srv := testServer(t, nil)
	body, err := encodeBody(&HelloRequest{Server: ServerInfo{ID: "peer", Addr: "127.0.0.1:1"}})
	must.NoError(t, err)
	resp := srv.dispatchRPC(&rpcRequest{Method: "Cluster.Hello", Body: body})
	must.Eq(t, "", resp.Error)
	var hello HelloResponse
	must.NoError(t, structs.Decode(resp.Body, &hello))
	must.Eq(t, srv.self().ID, hello.Server.ID)

	resp = srv.dispatchRPC(&rpcRequest{Method: "Cluster.Nope", Body: body})
	must.Eq(t, 400, resp.Code)
}
