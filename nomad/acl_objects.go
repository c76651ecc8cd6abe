package nomad

import (
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// aclObject is one kind of ACL object the ACL endpoints write (a role, a binding rule, an
// auth method): how the state finds one by its key, and what a 404 calls it. Their upserts
// and deletes check and answer the same way through it.
type aclObject[T any] struct {
	// kind names the object in a 404 ("ACL role").
	kind  string
	byKey func(store *state.StateStore, ws memdb.WatchSet, key string) (*T, error)
}

var (
	aclRoles        = aclObject[structs.ACLRole]{kind: "ACL role", byKey: (*state.StateStore).ACLRoleByID}
	aclBindingRules = aclObject[structs.ACLBindingRule]{kind: "ACL binding rule", byKey: (*state.StateStore).ACLBindingRuleByID}
	aclAuthMethods  = aclObject[structs.ACLAuthMethod]{kind: "ACL auth-method", byKey: (*state.StateStore).ACLAuthMethodByName}
)

// existing is the stored object key names, a 404 when there is none.
func (o aclObject[T]) existing(store *state.StateStore, key string) (*T, error) {
	obj, err := o.byKey(store, nil, key)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, structs.NewErrCode(404, "%s %q not found", o.kind, key)
	}
	return obj, nil
}

// mustExist refuses with a 404 naming the first key that names no stored object.
func (o aclObject[T]) mustExist(store *state.StateStore, keys []string) error {
	for _, key := range keys {
		if _, err := o.existing(store, key); err != nil {
			return err
		}
	}
	return nil
}

// claimID gives an object without an ID a new one (nil: nothing stored before); an ID the
// caller set must name a stored object, which is returned for the caller's own checks.
func (o aclObject[T]) claimID(store *state.StateStore, id *string) (*T, error) {
	if *id != "" {
		return o.existing(store, *id)
	}
	generated, err := uuid.GenerateUUID()
	if err != nil {
		return nil, err
	}
	*id = generated
	return nil, nil
}

// applyAndRead applies an upsert of the objects keys name and answers with each as stored
// (through show, which may redact it), and the index it was applied at.
func (o aclObject[T]) applyAndRead(c *rpcCall, t structs.MessageType, req any, keys []string, show func(*T) *T) ([]*T, uint64, error) {
	index, err := c.srv.raftApply(t, req)
	if err != nil {
		return nil, 0, err
	}
	store := c.srv.State()
	out := make([]*T, 0, len(keys))
	for _, key := range keys {
		stored, err := o.byKey(store, nil, key)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, show(stored))
	}
	return out, index, nil
}

// aclDeleteChecked is the Check of a delete row: every object it names must exist.
func aclDeleteChecked[Req, T any](o aclObject[T], keys func(*Req) []string) func(*rpcCall, *Req) error {
	return func(c *rpcCall, req *Req) error { return o.mustExist(c.srv.State(), keys(req)) }
}

// keysOf lists the keys of objects, for applyAndRead.
func keysOf[T any](objs []*T, key func(*T) string) []string {
	out := make([]string, len(objs))
	for i, obj := range objs {
		out[i] = key(obj)
	}
	return out
}

// asStored answers an object as stored.
func asStored[T any](obj *T) *T { return obj }
