package nomad

import (
	"sort"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// aclGetPolicySelf lists the policies the caller holds, directly or through its roles
// (`GET /v1/acl/policy/self`); an anonymous caller holds the `anonymous` policy when it
// exists. A management token holds none: its rights come from its type. Names a token refers
// to that no longer exist are left out. Any caller may ask about itself; a token that does
// not resolve is refused as everywhere.
var aclGetPolicySelf = read("ACL.GetPolicySelf", spec[structs.QueryOptions, PolicyListResponse]{
	Caller:    callerAnyone,
	Authorize: aclEnabled[structs.QueryOptions],
	Serve: func(c *rpcCall, req *structs.QueryOptions, reply *PolicyListResponse) error {
		held, err := aclTokenPolicyNames(c)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(held))
		for name := range held {
			names = append(names, name)
		}
		sort.Strings(names)
		return c.srv.blockingRPC(req, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			reply.Policies = []*structs.ACLPolicyListStub{}
			for _, name := range names {
				p, err := store.ACLPolicyByName(ws, name)
				if err != nil {
					return 0, err
				}
				if p != nil {
					reply.Policies = append(reply.Policies, p.Stub())
				}
			}
			return store.Index("acl_policy"), nil
		})
	},
})

// GetPolicySelf lists the policies the caller holds.
func (a *ACL) GetPolicySelf(args *structs.QueryOptions, reply *PolicyListResponse) error {
	return aclGetPolicySelf.Call(a.srv, args, reply)
}
