package nomad

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/nomad/paginator"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Variables is the variables RPC endpoint. Items travel in clear only between the caller and
// this endpoint: the leader encrypts them before raftApply and decrypts them for a reader
// holding the read capability on the path.
type Variables struct {
	srv *Server
}

// variableOpCapability is the path capability each write needs.
var variableOpCapability = map[structs.VarOp]string{
	structs.VarOpSet:         acl.VariablesCapabilityWrite,
	structs.VarOpCAS:         acl.VariablesCapabilityWrite,
	structs.VarOpLockAcquire: acl.VariablesCapabilityWrite,
	structs.VarOpLockRelease: acl.VariablesCapabilityWrite,
	structs.VarOpDelete:      acl.VariablesCapabilityDestroy,
	structs.VarOpDeleteCAS:   acl.VariablesCapabilityDestroy,
}

// requestNamespace is the namespace a variable request addresses: the variable's own, else
// the request's, else default.
func requestNamespace(varNS, reqNS string) string {
	switch {
	case varNS != "":
		return varNS
	case reqNS != "":
		return reqNS
	}
	return structs.DefaultNamespace
}

func variableDenied(capability, namespace, path string) error {
	return structs.PermissionDenied("%s capability required on variable path %q in namespace %q", capability, path, namespace)
}

// variablesApply writes, deletes, locks or unlocks one variable. A failed check-and-set or
// lock check is no error: reply.Conflict then holds the variable as it is.
var variablesApply = write("Variables.Apply", spec[structs.VariablesApplyRequest, structs.VariablesApplyResponse]{
	// Which capability the call needs depends on Op, and on which path on Var: a request
	// without them cannot be authorised at all, so it is refused before.
	Prepare: func(req *structs.VariablesApplyRequest) error {
		if req.Var == nil {
			return structs.BadRequest("missing Var: the request names no variable")
		}
		if _, ok := variableOpCapability[req.Op]; !ok {
			return structs.BadRequest("invalid Op %q", req.Op)
		}
		return nil
	},
	Authorize: func(c *rpcCall, req *structs.VariablesApplyRequest) error {
		capability, ok := variableOpCapability[req.Op]
		if !ok {
			capability = acl.VariablesCapabilityWrite
		}
		var varNS, path string
		if req.Var != nil {
			varNS, path = req.Var.Namespace, req.Var.Path
		}
		namespace := requestNamespace(varNS, req.Namespace)
		if !c.acl.AllowVariableOperation(namespace, path, capability) {
			return variableDenied(capability, namespace, path)
		}
		return nil
	},
	Validate: func(req *structs.VariablesApplyRequest) error {
		in := applyTarget(req)
		return validateVariableApply(req.Op, &in)
	},
	Serve: func(c *rpcCall, req *structs.VariablesApplyRequest, reply *structs.VariablesApplyResponse) error {
		return serveVariablesApply(c, req, reply)
	},
})

// applyTarget is the variable a write acts on, in the namespace it addresses; a copy, so
// that the caller's request is left as it was sent.
func applyTarget(req *structs.VariablesApplyRequest) structs.VariableDecrypted {
	in := *req.Var
	in.VariableMetadata = req.Var.VariableMetadata.Copy()
	in.Namespace = requestNamespace(in.Namespace, req.Namespace)
	return in
}

func serveVariablesApply(c *rpcCall, args *structs.VariablesApplyRequest, reply *structs.VariablesApplyResponse) error {
	srv := c.srv
	in := applyTarget(args)
	if ns, err := srv.State().NamespaceByName(nil, in.Namespace); err != nil {
		return err
	} else if ns == nil {
		return structs.BadRequest("invalid Namespace: namespace %q does not exist", in.Namespace)
	}

	// Everything non-deterministic is fixed here, before the entry is written.
	in.ModifyTime = now().UnixNano()
	if args.Op == structs.VarOpLockAcquire {
		if until := srv.varLocks.delayedUntil(in.Namespace, in.Path, now()); !until.IsZero() {
			return structs.Conflict("variable %q: its lock expired and cannot be taken again for %s (lock delay)",
				in.Path, until.Sub(now()).Round(time.Millisecond))
		}
		id, err := uuid.GenerateUUID()
		if err != nil {
			return err
		}
		lock := &structs.VariableLock{ID: id, TTL: structs.VariableLockDefaultTTL, LockDelay: structs.VariableLockDefaultDelay}
		if in.Lock != nil {
			if in.Lock.TTL != 0 {
				lock.TTL = in.Lock.TTL
			}
			if in.Lock.LockDelay != 0 {
				lock.LockDelay = in.Lock.LockDelay
			}
		}
		in.Lock = lock
	}
	enc, err := srv.encryptVariable(&in)
	if err != nil {
		return err
	}
	index, raw, err := srv.raftApplyResponse(structs.VarApplyStateRequestType,
		&structs.VarApplyStateRequest{Op: args.Op, Var: enc, Actor: c.actor, WriteRequest: args.WriteRequest})
	reply.Index, reply.Op = index, args.Op
	if err != nil {
		return err
	}
	resp, _ := raw.(*structs.VarApplyStateResponse)
	if resp == nil {
		return structs.NewErrCode(500, "variable write returned no result")
	}
	if resp.Conflict != nil {
		reply.Conflict, err = visibleVariable(srv, c.acl, resp.Conflict)
		return err
	}
	switch args.Op {
	case structs.VarOpDelete, structs.VarOpDeleteCAS, structs.VarOpLockRelease:
		srv.varLocks.forget(in.Namespace, in.Path, "")
	case structs.VarOpLockAcquire:
		srv.varLocks.arm(in.Namespace, in.Path, in.Lock, now())
	}
	if resp.Written == nil {
		return nil
	}
	// A release answers without items, as upstream; a write echoes what was written.
	reply.Output = &structs.VariableDecrypted{VariableMetadata: resp.Written.VariableMetadata.Copy()}
	switch {
	case args.Op == structs.VarOpLockRelease:
	case len(in.Items) > 0:
		reply.Output.Items = in.Items
	default:
		reply.Output, err = srv.decryptVariable(resp.Written)
	}
	return err
}

// Apply writes, deletes, locks or unlocks one variable.
func (v *Variables) Apply(args *structs.VariablesApplyRequest, reply *structs.VariablesApplyResponse) error {
	return variablesApply.Call(v.srv, args, reply)
}

// validateVariableApply checks what each operation needs: a valid path always, items for a
// write, items (when given) within the limits for a lock acquire.
func validateVariableApply(op structs.VarOp, in *structs.VariableDecrypted) error {
	switch op {
	case structs.VarOpSet, structs.VarOpCAS:
		return in.Validate()
	case structs.VarOpLockAcquire:
		if len(in.Items) > 0 {
			if err := in.Validate(); err != nil {
				return err
			}
		}
		if l := in.Lock; l != nil && l.TTL != 0 && (l.TTL < structs.VariableLockMinTTL || l.TTL > structs.VariableLockMaxTTL) {
			return structs.BadRequest("invalid Lock.TTL %s: must be between %s and %s", l.TTL, structs.VariableLockMinTTL, structs.VariableLockMaxTTL)
		}
		if l := in.Lock; l != nil && (l.LockDelay < 0 || l.LockDelay > structs.VariableLockMaxTTL) {
			return structs.BadRequest("invalid Lock.LockDelay %s: must be between 0 and %s", l.LockDelay, structs.VariableLockMaxTTL)
		}
	case structs.VarOpLockRelease:
		if in.LockID() == "" {
			return structs.BadRequest("missing Lock.ID: releasing a lock needs the lock's ID")
		}
	}
	if in.Namespace == structs.AllNamespacesSentinel {
		return structs.BadRequest("invalid Namespace: a variable cannot be written to the wildcard namespace")
	}
	return structs.ValidateVariablePath(in.Path)
}

// visibleVariable is a variable as the caller may see it: with items only for a reader of
// its path.
func visibleVariable(srv *Server, aclObj *acl.ACL, enc *structs.VariableEncrypted) (*structs.VariableDecrypted, error) {
	if !aclObj.AllowVariableOperation(enc.Namespace, enc.Path, acl.VariablesCapabilityRead) {
		return &structs.VariableDecrypted{VariableMetadata: enc.VariableMetadata.Copy()}, nil
	}
	return srv.decryptVariable(enc)
}

// variablesRenewLock extends a held lock by its TTL. The lock ID proves the caller holds it.
// Nothing is written: expiry lives in the leader's memory (variables_locks.go).
var variablesRenewLock = write("Variables.RenewLock", spec[structs.VariablesRenewLockRequest, structs.VariablesRenewLockResponse]{
	Authorize: variablePathCap(acl.VariablesCapabilityWrite, func(req *structs.VariablesRenewLockRequest) (string, string) {
		return req.Namespace, req.Path
	}),
	Validate: func(req *structs.VariablesRenewLockRequest) error {
		if err := structs.ValidateVariablePath(req.Path); err != nil {
			return err
		}
		if req.LockID == "" {
			return structs.BadRequest("missing Lock.ID: renewing a lock needs the lock's ID")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.VariablesRenewLockRequest, reply *structs.VariablesRenewLockResponse) error {
		namespace := requestNamespace("", req.Namespace)
		cur, err := c.srv.State().VariableByPath(nil, namespace, req.Path)
		if err != nil {
			return err
		}
		if cur == nil {
			return structs.NotFound(errVariableNotFound)
		}
		if cur.LockID() != req.LockID {
			return structs.Conflict("variable %q is not locked with the given lock ID", req.Path)
		}
		c.srv.varLocks.arm(namespace, req.Path, cur.Lock, now())
		meta := cur.VariableMetadata.Copy()
		reply.VarMeta = &meta
		reply.Index = cur.ModifyIndex
		return nil
	},
})

// RenewLock extends a held lock by its TTL.
func (v *Variables) RenewLock(args *structs.VariablesRenewLockRequest, reply *structs.VariablesRenewLockResponse) error {
	return variablesRenewLock.Call(v.srv, args, reply)
}

var errVariableNotFound = structs.ErrVariableNotFound

// variablesRead returns one variable with its items; reply.Data is nil when there is none.
var variablesRead = read("Variables.Read", spec[structs.VariablesReadRequest, structs.VariablesReadResponse]{
	Authorize: variablePathCap(acl.VariablesCapabilityRead, func(req *structs.VariablesReadRequest) (string, string) {
		return req.Namespace, req.Path
	}),
	Validate: func(req *structs.VariablesReadRequest) error { return structs.ValidateVariablePath(req.Path) },
	Serve: func(c *rpcCall, req *structs.VariablesReadRequest, reply *structs.VariablesReadResponse) error {
		namespace := requestNamespace("", req.Namespace)
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			reply.Data = nil
			enc, err := store.VariableByPath(ws, namespace, req.Path)
			if err != nil {
				return 0, err
			}
			if enc != nil {
				if reply.Data, err = c.srv.decryptVariable(enc); err != nil {
					return 0, err
				}
			}
			return store.Index(tableVariablesName), nil
		})
	},
})

// Read returns one variable with its items.
func (v *Variables) Read(args *structs.VariablesReadRequest, reply *structs.VariablesReadResponse) error {
	return variablesRead.Call(v.srv, args, reply)
}

// tableVariablesName is the state table whose index answers variable reads.
const tableVariablesName = "variables"

// variablesList lists the metadata of the variables the caller may list, in one namespace
// or, with "*", in all; Prefix filters by path. It needs no capability up front: each
// variable is kept only for a caller holding list on its path, so a caller without any gets
// an empty list, as upstream.
var variablesList = read("Variables.List", spec[structs.VariablesListRequest, structs.VariablesListResponse]{
	Caller:    callerAnyone,
	Authorize: anyone[structs.VariablesListRequest],
	Serve: func(c *rpcCall, req *structs.VariablesListRequest, reply *structs.VariablesListResponse) error {
		namespace := requestNamespace("", req.Namespace)
		return pagedList(c.srv.blockingRPC, &req.QueryOptions, &reply.QueryMeta, &reply.Data,
			func(ws memdb.WatchSet, store *state.StateStore) ([]*structs.VariableEncrypted, error) {
				return store.Variables(ws, namespace, req.Prefix)
			},
			paginator.Order[*structs.VariableEncrypted]{Key: func(e *structs.VariableEncrypted) paginator.Key {
				return paginator.ByNamespaceID(e.Namespace, e.Path)
			}},
			func(e *structs.VariableEncrypted) bool {
				return c.acl.AllowVariableOperation(e.Namespace, e.Path, acl.VariablesCapabilityList)
			},
			func(e *structs.VariableEncrypted) (*structs.VariableMetadata, error) {
				meta := e.VariableMetadata.Copy()
				return &meta, nil
			},
			func(store *state.StateStore) uint64 { return store.Index(tableVariablesName) })
	},
})

// List lists the metadata of the variables the caller may list.
func (v *Variables) List(args *structs.VariablesListRequest, reply *structs.VariablesListResponse) error {
	return variablesList.Call(v.srv, args, reply)
}
