package state

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

func TestStateStore_DefaultNamespace(t *testing.T) {
	s := testStateStore(t)
	ns, err := s.NamespaceByName(nil, structs.DefaultNamespace)
	must.NoError(t, err)
	must.NotNil(t, ns)
	must.Eq(t, uint64(1), ns.CreateIndex)
	must.Eq(t, uint64(1), s.Index(tableNamespaces))
}

func TestStateStore_UpsertNamespaces(t *testing.T) {
	s := testStateStore(t)
	upsertNamespaces(t, s, 10, "prod", "dev")
	mustApply(t, s, structs.NamespaceUpsertRequestType, 20, nil, func(txn *Txn) error {
		return s.UpsertNamespacesTxn(txn, []*structs.Namespace{{Name: "prod", Description: "updated"}})
	})

	prod, err := s.NamespaceByName(nil, "prod")
	must.NoError(t, err)
	must.Eq(t, "updated", prod.Description)
	must.Eq(t, uint64(10), prod.CreateIndex)
	must.Eq(t, uint64(20), prod.ModifyIndex)
	must.Eq(t, uint64(20), s.Index(tableNamespaces))

	all, err := s.Namespaces(nil)
	must.NoError(t, err)
	var names []string
	for _, ns := range all {
		names = append(names, ns.Name)
	}
	must.Eq(t, []string{"default", "dev", "prod"}, names)

	missing, err := s.NamespaceByName(nil, "nope")
	must.NoError(t, err)
	must.Nil(t, missing)
}

func TestStateStore_DeleteNamespaces(t *testing.T) {
	cases := []struct {
		name     string
		names    []string
		wantCode int // 0: success
		wantMsg  string
	}{
		{name: "default refused", names: []string{"default"}, wantCode: 400, wantMsg: "default namespace can not be deleted"},
		{name: "non-empty refused", names: []string{"prod"}, wantCode: 400, wantMsg: `namespace "prod" has non-terminal jobs`},
		{name: "unknown", names: []string{"nope"}, wantCode: 404},
		{name: "one bad name refuses all", names: []string{"empty", "prod"}, wantCode: 400},
		{name: "empty namespace", names: []string{"empty"}},
		// "pro" is a prefix of "prod", which holds a job: it must not count as holding it.
		{name: "namespace prefix of a busy one", names: []string{"pro"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			upsertNamespaces(t, s, 10, "prod", "empty", "pro")
			upsertJob(t, s, 11, mockJobIn("prod", "web"))

			err := applyTxn(s, structs.NamespaceDeleteRequestType, 20, nil, func(txn *Txn) error {
				return s.DeleteNamespacesTxn(txn, tc.names)
			})
			if tc.wantCode != 0 {
				mustCode(t, tc.wantCode, err)
				must.StrContains(t, err.Error(), tc.wantMsg)
				all, err := s.Namespaces(nil)
				must.NoError(t, err)
				must.Len(t, 4, all)
				return
			}
			must.NoError(t, err)
			for _, name := range tc.names {
				ns, err := s.NamespaceByName(nil, name)
				must.NoError(t, err)
				must.Nil(t, ns)
			}
			must.Eq(t, uint64(20), s.Index(tableNamespaces))
		})
	}
}

func TestStateStore_DeleteNamespaces_AfterJobPurged(t *testing.T) {
	s := testStateStore(t)
	upsertNamespaces(t, s, 10, "prod")
	upsertJob(t, s, 11, mockJobIn("prod", "web"))
	must.NoError(t, applyPurge(s, 12, nil, "prod", "web", "rec-1", nil))
	mustApply(t, s, structs.NamespaceDeleteRequestType, 13, nil, func(txn *Txn) error {
		return s.DeleteNamespacesTxn(txn, []string{"prod"})
	})
	ns, err := s.NamespaceByName(nil, "prod")
	must.NoError(t, err)
	must.Nil(t, ns)
}
