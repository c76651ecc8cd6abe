package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

var namespaceRows = rowKind[*structs.Namespace]{
	table: tableNamespaces, what: "namespace", noun: "namespace",
	key:  func(ns *structs.Namespace) string { return ns.Name },
	raft: func(ns *structs.Namespace) (*uint64, *uint64) { return &ns.CreateIndex, &ns.ModifyIndex },
}

func init() {
	registerTable(tableNamespaces, &structs.Namespace{}, idIndex(field("Name")))
}

// UpsertNamespacesTxn creates or updates namespaces.
func (s *StateStore) UpsertNamespacesTxn(txn *Txn, namespaces []*structs.Namespace) error {
	for _, ns := range namespaces {
		if err := s.upsertNamespaceTxn(txn, ns); err != nil {
			return err
		}
	}
	return nil
}

func (s *StateStore) upsertNamespaceTxn(txn *Txn, ns *structs.Namespace) error {
	if err := namespaceRows.upsert(txn, ns, nil); err != nil {
		return err
	}
	return txn.bumpIndex(tableNamespaces)
}

// DeleteNamespacesTxn deletes namespaces that hold no jobs. The default namespace cannot be
// deleted.
func (s *StateStore) DeleteNamespacesTxn(txn *Txn, names []string) error {
	for _, name := range names {
		if name == structs.DefaultNamespace {
			return structs.BadRequest("default namespace can not be deleted")
		}
		// Jobs can only be registered in a namespace that exists, so checking them before
		// the namespace's own existence answers every real case as before.
		job, err := txn.First(tableJobs, indexID+"_prefix", name, "")
		if err != nil {
			return fmt.Errorf("state: namespace jobs: %w", err)
		}
		if job != nil {
			return structs.BadRequest("namespace %q has non-terminal jobs in regions: [%s]", name, job.(*structs.Job).Region)
		}
		if err := namespaceRows.delete(txn, name); err != nil {
			return err
		}
	}
	return txn.bumpIndex(tableNamespaces)
}

func (s *StateStore) namespaceTxn(txn *Txn, name string) (*structs.Namespace, error) {
	raw, err := txn.First(tableNamespaces, indexID, name)
	if err != nil {
		return nil, fmt.Errorf("state: namespace lookup: %w", err)
	}
	if raw == nil {
		return nil, structs.BadRequest("namespace %q does not exist", name)
	}
	return raw.(*structs.Namespace), nil
}

// NamespaceByName reads one namespace; nil when unknown.
func (s *StateStore) NamespaceByName(ws memdb.WatchSet, name string) (*structs.Namespace, error) {
	return first[*structs.Namespace](s.db.Txn(false), ws, "namespace lookup", tableNamespaces, indexID, name)
}

// Namespaces lists namespaces by name.
func (s *StateStore) Namespaces(ws memdb.WatchSet) ([]*structs.Namespace, error) {
	return list[*structs.Namespace](s.db.Txn(false), ws, "namespace list", tableNamespaces, indexID)
}
