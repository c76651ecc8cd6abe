package state

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func upsertPools(s *StateStore, index uint64, pools ...*structs.NodePool) error {
	txn := s.WriteTxn(structs.NodePoolUpsertRequestType, index, &TxnMeta{})
	defer txn.Abort()
	if err := s.UpsertNodePoolsTxn(txn, pools); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func deletePools(s *StateStore, index uint64, names ...string) error {
	txn := s.WriteTxn(structs.NodePoolDeleteRequestType, index, &TxnMeta{})
	defer txn.Abort()
	if err := s.DeleteNodePoolsTxn(txn, names); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func TestNodePools_BuiltInsAlwaysExist(t *testing.T) {
	s := testStateStore(t)
	pools, err := s.NodePools(nil, "")
	must.NoError(t, err)
	must.SliceLen(t, 2, pools)
	must.Eq(t, structs.NodePoolAll, pools[0].Name)
	must.Eq(t, structs.NodePoolDefault, pools[1].Name)

	// A caller changing what it got changes nothing stored.
	pools[1].Description = "changed"
	again, err := s.NodePoolByName(nil, structs.NodePoolDefault)
	must.NoError(t, err)
	must.NotEq(t, "changed", again.Description)

	for _, name := range []string{structs.NodePoolAll, structs.NodePoolDefault} {
		must.ErrorContains(t, upsertPools(s, 5, &structs.NodePool{Name: name}), "is not allowed")
		must.ErrorContains(t, deletePools(s, 5, name), "deleting built-in node pool")
	}
	must.Zero(t, s.Index(tableNodePools))
}

func TestNodePools_UpsertListDelete(t *testing.T) {
	s := testStateStore(t)
	must.NoError(t, upsertPools(s, 10, &structs.NodePool{Name: "dev-1", NodeIdentityTTL: time.Hour}, &structs.NodePool{Name: "prod"}))
	must.NoError(t, upsertPools(s, 11, &structs.NodePool{Name: "dev-1", Description: "d"}))

	p, err := s.NodePoolByName(nil, "dev-1")
	must.NoError(t, err)
	must.Eq(t, uint64(10), p.CreateIndex)
	must.Eq(t, uint64(11), p.ModifyIndex)
	must.Eq(t, "d", p.Description)

	names := func(prefix string) []string {
		pools, err := s.NodePools(nil, prefix)
		must.NoError(t, err)
		var out []string
		for _, p := range pools {
			out = append(out, p.Name)
		}
		return out
	}
	must.Eq(t, []string{"all", "default", "dev-1", "prod"}, names(""))
	must.Eq(t, []string{"default", "dev-1"}, names("d"))

	must.NoError(t, deletePools(s, 12, "prod"))
	must.Eq(t, []string{"all", "default", "dev-1"}, names(""))
	err = deletePools(s, 13, "prod")
	must.ErrorIs(t, err, structs.ErrNodePoolNotFound)
	must.Eq(t, 404, structs.ErrorCode(err))
}

func TestNodePools_DeleteRefusedWhileInUse(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, s *StateStore)
		wantErr string
	}{
		{
			name: "a node is in it",
			setup: func(t *testing.T, s *StateStore) {
				txn := s.WriteTxn(structs.NodeRegisterRequestType, 20, &TxnMeta{})
				defer txn.Abort()
				must.NoError(t, s.UpsertNodeTxn(txn, &structs.Node{ID: "n1", SecretID: "s1", NodePool: "busy", Status: structs.NodeStatusReady}))
				txn.Commit()
			},
			wantErr: `node pool "busy" has nodes`,
		},
		{
			name: "a live job uses it",
			setup: func(t *testing.T, s *StateStore) {
				job := mockJob("web")
				job.NodePool = "busy"
				must.NoError(t, applyRegister(s, 20, nil, job, nil))
			},
			wantErr: `node pool "busy" has non-terminal jobs`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			must.NoError(t, upsertPools(s, 10, &structs.NodePool{Name: "busy"}))
			tc.setup(t, s)
			err := deletePools(s, 30, "busy")
			must.ErrorContains(t, err, tc.wantErr)
			must.Eq(t, 400, structs.ErrorCode(err))
			p, err := s.NodePoolByName(nil, "busy")
			must.NoError(t, err)
			must.NotNil(t, p)
		})
	}
}

func TestNodePoolEvents(t *testing.T) {
	s := testStateStore(t)
	got := captureEvents(s)
	must.NoError(t, upsertPools(s, 10, &structs.NodePool{Name: "dev"}))
	must.NoError(t, deletePools(s, 11, "dev"))
	must.SliceLen(t, 2, *got)
	for i, want := range []string{"NodePoolUpserted", "NodePoolDeleted"} {
		e := (*got)[i].Events[0]
		must.Eq(t, structs.TopicNodePool, e.Topic)
		must.Eq(t, want, e.Type)
		must.Eq(t, "dev", e.Key)
	}
}

// A node naming a pool that does not exist creates it in its own registration, as upstream.
func TestNodePools_NodeRegistrationCreatesItsPool(t *testing.T) {
	s := testStateStore(t)
	for i, pool := range []string{"batch", "batch", "default", ""} {
		txn := s.WriteTxn(structs.NodeRegisterRequestType, uint64(10+i), &TxnMeta{})
		must.NoError(t, s.UpsertNodeTxn(txn, &structs.Node{ID: "n" + pool, SecretID: "s" + pool, NodePool: pool}))
		txn.Commit()
	}
	pools, err := s.NodePools(nil, "")
	must.NoError(t, err)
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	must.Eq(t, []string{"all", "batch", "default"}, names)
	batch, err := s.NodePoolByName(nil, "batch")
	must.NoError(t, err)
	must.Eq(t, uint64(10), batch.CreateIndex)
	must.Eq(t, uint64(10), batch.ModifyIndex, must.Sprint("a second node of the pool rewrote it"))
}
