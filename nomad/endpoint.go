package nomad

import (
	"fmt"
	"sort"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/structs"
)

// The server's RPCs are declared, one row each, with read or write: the row names the call,
// who may make it, what a valid request is and what it does. The two pipelines below run
// every row the same way, whether the call came over RPC from another server or in-process
// from the HTTP API: forward to the leader (unless a stale read is allowed), resolve the
// caller's token, authorise, validate, then serve. A row cannot be declared without its
// authorisation, and the RPC dispatcher serves nothing but rows, so a call without a rule
// cannot exist; the ACL matrix test walks the same table.

// access says which pipeline serves a row.
type access uint8

const (
	accessRead access = iota + 1
	accessWrite
)

func (a access) String() string {
	if a == accessWrite {
		return "write"
	}
	return "read"
}

// caller says how a row's callers prove who they are, which decides what the ACL matrix
// expects of it.
type caller uint8

const (
	// callerToken: an ACL token (or workload identity), checked against its policies. A
	// caller without a capability is refused; a management token is not.
	callerToken caller = iota
	// callerNode: a client node, by the node's own secret. Every ACL token is refused,
	// management included: these calls act for a node and only the node may make them.
	callerNode
	// callerAnyone: no token is needed (the leader's address, bootstrap, login, reading
	// one's own token); the row's Authorize still decides, on what the request carries.
	callerAnyone
	// callerNodeOrToken: a client node by its secret, or an ACL token holding the row's
	// capability (reading an allocation, which the node running it and an operator both
	// do). The ACL matrix holds it to a token row's rules.
	callerNodeOrToken
)

// rpcCall is what the pipeline resolved before the row's own code runs.
type rpcCall struct {
	srv   *Server
	acl   *acl.ACL
	actor *structs.Actor
	// token is the secret the call carried, for the rules of rows a node may call, which
	// check it against the node the request names (nodeSecret, nodeOr).
	token string
	// aclErr is why the token did not resolve as an ACL token, on a callerNodeOrToken row
	// (where a node's secret is expected not to); acl is nil then.
	aclErr error
}

// spec is one row: what a call of type Req answered with Resp does.
type spec[Req, Resp any] struct {
	// Caller says how callers authenticate; the zero value is an ACL token.
	Caller caller
	// Prepare fills in what the request leaves to the server before it is authorised, so
	// that Authorize reads the namespace the call will act on (a job's own namespace when
	// the request names none). It may refuse a request that cannot be read at all.
	Prepare func(req *Req) error
	// Authorize refuses the call with structs.PermissionDenied naming what is missing. It
	// must answer for any request, the zero one included.
	Authorize func(c *rpcCall, req *Req) error
	// Validate refuses a malformed request with structs.BadRequest naming the field.
	Validate func(req *Req) error
	// Serve answers an authorised, valid request. A write's Serve stamps what the server
	// owns (IDs, times, the actor) and applies through Raft; without a Serve, a write
	// stamps the actor through Fix and applies Message itself.
	Serve func(c *rpcCall, req *Req, resp *Resp) error
	// Message is the Raft entry a write without Serve applies, its request as the body.
	Message structs.MessageType
	// Check refuses a write without Serve on what the state holds (the objects it names
	// must exist), before Fix stamps it.
	Check func(c *rpcCall, req *Req) error
	// Fix stamps a write without Serve before it is applied.
	Fix func(c *rpcCall, req *Req)
}

// route is a declared row with its pipeline; Call runs it.
type route[Req, Resp any] struct {
	name   string
	access access
	spec   spec[Req, Resp]
}

// endpoint is a row as the table and the RPC dispatcher see it, whatever its types.
type endpoint interface {
	Name() string
	Access() access
	Caller() caller
	// newArgs and newReply make the row's request and answer, for decoding a call.
	newArgs() any
	newReply() any
	// callAny runs the pipeline on values made by newArgs and newReply.
	callAny(s *Server, args, reply any) error
	// authorize runs only the row's authorisation, for the ACL matrix.
	authorize(c *rpcCall, args any) error
}

// routeTable holds every declared row by name. Rows are added as the package's variables
// are initialised, before any server can start.
var routeTable = map[string]endpoint{}

// read declares a read row.
func read[Req, Resp any](name string, s spec[Req, Resp]) *route[Req, Resp] {
	if _, ok := any(new(Req)).(queryRequest); !ok {
		panic(fmt.Sprintf("RPC %s: a read's request must carry structs.QueryOptions", name))
	}
	if s.Serve == nil {
		panic(fmt.Sprintf("RPC %s: a read needs Serve", name))
	}
	return declare(name, accessRead, s)
}

// write declares a write row.
func write[Req, Resp any](name string, s spec[Req, Resp]) *route[Req, Resp] {
	if _, ok := any(new(Req)).(tokenRequest); !ok {
		panic(fmt.Sprintf("RPC %s: a write's request must carry an auth token", name))
	}
	if (s.Serve == nil) == (s.Message == 0) {
		panic(fmt.Sprintf("RPC %s: a write needs either Serve or a Message to apply", name))
	}
	if s.Serve != nil && (s.Check != nil || s.Fix != nil) {
		panic(fmt.Sprintf("RPC %s: Check and Fix are for a write without Serve", name))
	}
	if s.Serve == nil {
		if _, ok := any(new(Resp)).(indexResponse); !ok {
			panic(fmt.Sprintf("RPC %s: a write that applies its Message answers with an index", name))
		}
	}
	return declare(name, accessWrite, s)
}

func declare[Req, Resp any](name string, a access, s spec[Req, Resp]) *route[Req, Resp] {
	if s.Authorize == nil {
		panic(fmt.Sprintf("RPC %s: no Authorize; every call needs its rule", name))
	}
	if _, dup := routeTable[name]; dup {
		panic(fmt.Sprintf("RPC %s declared twice", name))
	}
	r := &route[Req, Resp]{name: name, access: a, spec: s}
	routeTable[name] = r
	return r
}

// queryRequest is a read's request: structs.QueryOptions embedded.
type queryRequest interface {
	QueryOpts() *structs.QueryOptions
}

// tokenRequest is a write's request: it carries the caller's token.
type tokenRequest interface {
	RequestToken() string
}

// indexResponse is an answer that reports the Raft index a write was applied at.
type indexResponse interface {
	SetIndex(uint64)
}

func (r *route[Req, Resp]) Name() string   { return r.name }
func (r *route[Req, Resp]) Access() access { return r.access }
func (r *route[Req, Resp]) Caller() caller { return r.spec.Caller }
func (r *route[Req, Resp]) newArgs() any   { return new(Req) }
func (r *route[Req, Resp]) newReply() any  { return new(Resp) }

func (r *route[Req, Resp]) callAny(s *Server, args, reply any) error {
	return r.Call(s, args.(*Req), reply.(*Resp))
}

func (r *route[Req, Resp]) authorize(c *rpcCall, args any) error {
	return r.spec.Authorize(c, args.(*Req))
}

// Call runs the row's pipeline on this server.
func (r *route[Req, Resp]) Call(s *Server, req *Req, resp *Resp) error {
	if r.access == accessRead {
		if done, err := s.forwardRead(r.name, any(req).(queryRequest).QueryOpts(), req, resp); done {
			return err
		}
	} else if done, err := s.forward(r.name, req, resp); done {
		return err
	}
	if r.spec.Prepare != nil {
		if err := r.spec.Prepare(req); err != nil {
			return err
		}
	}
	// The token is read after Prepare, which may set it aside: a call that needs none
	// (bootstrap, login) must not fail on a stale token the caller still sends.
	c := &rpcCall{srv: s, token: requestToken(req)}
	switch r.spec.Caller {
	case callerNode:
		// The row's rule checks the secret against the node it names; a node's secret is
		// no ACL token.
	case callerNodeOrToken:
		c.acl, c.actor, c.aclErr = s.resolveACL(c.token)
	default:
		var err error
		if c.acl, c.actor, err = s.resolveACL(c.token); err != nil {
			return err
		}
	}
	if err := r.spec.Authorize(c, req); err != nil {
		return err
	}
	if r.spec.Validate != nil {
		if err := r.spec.Validate(req); err != nil {
			return err
		}
	}
	if r.access == accessWrite {
		if err := s.checkLeader(); err != nil {
			return err
		}
	}
	if r.spec.Serve != nil {
		return r.spec.Serve(c, req, resp)
	}
	if r.spec.Check != nil {
		if err := r.spec.Check(c, req); err != nil {
			return err
		}
	}
	if r.spec.Fix != nil {
		r.spec.Fix(c, req)
	}
	index, err := s.raftApply(r.spec.Message, req)
	if err != nil {
		return err
	}
	any(resp).(indexResponse).SetIndex(index)
	return nil
}

// requestToken is the secret a request carries.
func requestToken(req any) string {
	if q, ok := req.(queryRequest); ok {
		return q.QueryOpts().AuthToken
	}
	return req.(tokenRequest).RequestToken()
}

// routeNames lists the table's rows in order.
func routeNames() []string {
	names := make([]string, 0, len(routeTable))
	for n := range routeTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Rules the rows share.

// management allows only a management token (or ACLs off); what names the action refused.
func management[Req any](what string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, _ *Req) error {
		if c.acl.IsManagement() || c.acl.IsDisabled() {
			return nil
		}
		return structs.PermissionDenied("management token required to %s", what)
	}
}

// nodeSecret allows only the node the request names, by that node's secret (or its
// identity). An unknown node is a 404, which tells the client to register again.
func nodeSecret[Req any](nodeID func(*Req) string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error {
		return c.srv.authenticateNode(nodeID(req), c.token)
	}
}

// nodeOr allows the node the request names, by its secret, and otherwise a token that
// tokenRule allows.
func nodeOr[Req any](nodeID func(*Req) string, tokenRule func(*rpcCall, *Req) error) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error {
		if id := nodeID(req); id != "" && c.token != "" && c.srv.authenticateNode(id, c.token) == nil {
			return nil
		}
		if c.aclErr != nil {
			return c.aclErr
		}
		return tokenRule(c, req)
	}
}

// anyone allows every caller; for rows whose caller is callerAnyone and whose request needs
// no check of its own.
func anyone[Req any](*rpcCall, *Req) error { return nil }

// namespaceCap allows a caller holding capability in the namespace ns gives for the request
// (the default namespace when it names none).
func namespaceCap[Req any](capability string, ns func(*Req) string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error {
		name := ns(req)
		if name == "" {
			name = structs.DefaultNamespace
		}
		if c.acl.AllowNamespaceOperation(name, capability) {
			return nil
		}
		return structs.PermissionDenied("%s capability required in namespace %q", capability, name)
	}
}
