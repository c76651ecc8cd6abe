package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

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
	existing, err := txn.First(tableNamespaces, indexID, ns.Name)
	if err != nil {
		return fmt.Errorf("state: namespace lookup: %w", err)
	}
	ns.ModifyIndex = txn.Index
	ns.CreateIndex = txn.Index
	if existing != nil {
		ns.CreateIndex = existing.(*structs.Namespace).CreateIndex
	}
	if err := txn.Insert(tableNamespaces, ns); err != nil {
		return fmt.Errorf("state: namespace insert: %w", err)
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
		existing, err := txn.First(tableNamespaces, indexID, name)
		if err != nil {
			return fmt.Errorf("state: namespace lookup: %w", err)
		}
		if existing == nil {
			return structs.NewErrCode(404, "namespace %q not found", name)
		}
		job, err := txn.First(tableJobs, indexID+"_prefix", name, "")
		if err != nil {
			return fmt.Errorf("state: namespace jobs: %w", err)
		}
		if job != nil {
			return structs.BadRequest("namespace %q has non-terminal jobs in regions: [%s]", name, job.(*structs.Job).Region)
		}
		if err := txn.Delete(tableNamespaces, existing); err != nil {
			return fmt.Errorf("state: namespace delete: %w", err)
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
	iter, err := s.db.Txn(false).Get(tableNamespaces, indexID)
	if err != nil {
		return nil, fmt.Errorf("state: namespace list: %w", err)
	}
	ws.Add(iter.WatchCh())
	return collect[*structs.Namespace](iter), nil
}
