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

// Apply writes, deletes, locks or unlocks one variable. A failed check-and-set or lock
// check is no error: reply.Conflict then holds the variable as it is.
func (v *Variables) Apply(args *structs.VariablesApplyRequest, reply *structs.VariablesApplyResponse) error {
	if done, err := v.srv.forward("Variables.Apply", args, reply); done {
		return err
	}
	aclObj, actor, err := v.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	if args.Var == nil {
		return structs.BadRequest("missing Var: the request names no variable")
	}
	capability, ok := variableOpCapability[args.Op]
	if !ok {
		return structs.BadRequest("invalid Op %q", args.Op)
	}
	in := *args.Var
	in.VariableMetadata = args.Var.VariableMetadata.Copy()
	in.Namespace = requestNamespace(in.Namespace, args.Namespace)
	if !aclObj.AllowVariableOperation(in.Namespace, in.Path, capability) {
		return variableDenied(capability, in.Namespace, in.Path)
	}
	if err := validateVariableApply(args.Op, &in); err != nil {
		return err
	}
	if ns, err := v.srv.State().NamespaceByName(nil, in.Namespace); err != nil {
		return err
	} else if ns == nil {
		return structs.BadRequest("invalid Namespace: namespace %q does not exist", in.Namespace)
	}
	if err := v.srv.checkLeader(); err != nil {
		return err
	}

	// Everything non-deterministic is fixed here, before the entry is written.
	in.ModifyTime = now().UnixNano()
	if args.Op == structs.VarOpLockAcquire {
		if until := v.srv.varLocks.delayedUntil(in.Namespace, in.Path, now()); !until.IsZero() {
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
	enc, err := v.srv.encryptVariable(&in)
	if err != nil {
		return err
	}
	index, raw, err := v.srv.raftApplyResponse(structs.VarApplyStateRequestType,
		&structs.VarApplyStateRequest{Op: args.Op, Var: enc, Actor: actor, WriteRequest: args.WriteRequest})
	reply.Index, reply.Op = index, args.Op
	if err != nil {
		return err
	}
	resp, _ := raw.(*structs.VarApplyStateResponse)
	if resp == nil {
		return structs.NewErrCode(500, "variable write returned no result")
	}
	if resp.Conflict != nil {
		reply.Conflict, err = v.visible(aclObj, resp.Conflict)
		return err
	}
	switch args.Op {
	case structs.VarOpDelete, structs.VarOpDeleteCAS, structs.VarOpLockRelease:
		v.srv.varLocks.forget(in.Namespace, in.Path, "")
	case structs.VarOpLockAcquire:
		v.srv.varLocks.arm(in.Namespace, in.Path, in.Lock, now())
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
		reply.Output, err = v.srv.decryptVariable(resp.Written)
	}
	return err
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

// visible is a variable as the caller may see it: with items only for a reader of its path.
func (v *Variables) visible(aclObj *acl.ACL, enc *structs.VariableEncrypted) (*structs.VariableDecrypted, error) {
	if !aclObj.AllowVariableOperation(enc.Namespace, enc.Path, acl.VariablesCapabilityRead) {
		return &structs.VariableDecrypted{VariableMetadata: enc.VariableMetadata.Copy()}, nil
	}
	return v.srv.decryptVariable(enc)
}

// RenewLock extends a held lock by its TTL. The lock ID proves the caller holds it. Nothing
// is written: expiry lives in the leader's memory (variables_locks.go).
func (v *Variables) RenewLock(args *structs.VariablesRenewLockRequest, reply *structs.VariablesRenewLockResponse) error {
	if done, err := v.srv.forward("Variables.RenewLock", args, reply); done {
		return err
	}
	aclObj, _, err := v.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	namespace := requestNamespace("", args.Namespace)
	if !aclObj.AllowVariableOperation(namespace, args.Path, acl.VariablesCapabilityWrite) {
		return variableDenied(acl.VariablesCapabilityWrite, namespace, args.Path)
	}
	if err := structs.ValidateVariablePath(args.Path); err != nil {
		return err
	}
	if args.LockID == "" {
		return structs.BadRequest("missing Lock.ID: renewing a lock needs the lock's ID")
	}
	if err := v.srv.checkLeader(); err != nil {
		return err
	}
	cur, err := v.srv.State().VariableByPath(nil, namespace, args.Path)
	if err != nil {
		return err
	}
	if cur == nil {
		return structs.NotFound(errVariableNotFound)
	}
	if cur.LockID() != args.LockID {
		return structs.Conflict("variable %q is not locked with the given lock ID", args.Path)
	}
	v.srv.varLocks.arm(namespace, args.Path, cur.Lock, now())
	meta := cur.VariableMetadata.Copy()
	reply.VarMeta = &meta
	reply.Index = cur.ModifyIndex
	return nil
}

var errVariableNotFound = structs.ErrVariableNotFound

// Read returns one variable with its items; reply.Data is nil when there is none.
func (v *Variables) Read(args *structs.VariablesReadRequest, reply *structs.VariablesReadResponse) error {
	if done, err := v.srv.forwardRead("Variables.Read", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := v.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	namespace := requestNamespace("", args.Namespace)
	if !aclObj.AllowVariableOperation(namespace, args.Path, acl.VariablesCapabilityRead) {
		return variableDenied(acl.VariablesCapabilityRead, namespace, args.Path)
	}
	if err := structs.ValidateVariablePath(args.Path); err != nil {
		return err
	}
	return v.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		reply.Data = nil
		enc, err := store.VariableByPath(ws, namespace, args.Path)
		if err != nil {
			return 0, err
		}
		if enc != nil {
			if reply.Data, err = v.srv.decryptVariable(enc); err != nil {
				return 0, err
			}
		}
		return store.Index(tableVariablesName), nil
	})
}

// tableVariablesName is the state table whose index answers variable reads.
const tableVariablesName = "variables"

// List lists the metadata of the variables the caller may list, in one namespace or, with
// "*", in all; Prefix filters by path.
func (v *Variables) List(args *structs.VariablesListRequest, reply *structs.VariablesListResponse) error {
	if done, err := v.srv.forwardRead("Variables.List", &args.QueryOptions, args, reply); done {
		return err
	}
	aclObj, _, err := v.srv.resolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	namespace := requestNamespace("", args.Namespace)
	return v.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		all, err := store.Variables(ws, namespace, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Data, reply.NextToken, err = paginator.Page(all, args.QueryOptions,
			paginator.Order[*structs.VariableEncrypted]{Key: func(e *structs.VariableEncrypted) paginator.Key {
				return paginator.ByNamespaceID(e.Namespace, e.Path)
			}},
			func(e *structs.VariableEncrypted) bool {
				return aclObj.AllowVariableOperation(e.Namespace, e.Path, acl.VariablesCapabilityList)
			},
			func(e *structs.VariableEncrypted) (*structs.VariableMetadata, error) {
				meta := e.VariableMetadata.Copy()
				return &meta, nil
			})
		if err != nil {
			return 0, err
		}
		return store.Index(tableVariablesName), nil
	})
}
