package state

import (
	"fmt"
	"slices"
	"strings"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadfork/nomad/structs"
)

// UpsertServiceRegistrationsTxn stores the registrations a client sent. A registration whose
// allocation is gone, finished, or placed on another node than the one it names is skipped:
// the endpoint refused those already, so here they can only be a report that raced the
// allocation's end, and storing it would leave an instance nothing removes. A registration
// equal to the stored one is not written again, so a client's re-sync publishes nothing.
func (s *StateStore) UpsertServiceRegistrationsTxn(txn *Txn, services []*structs.ServiceRegistration) error {
	changed := false
	for _, svc := range services {
		alloc, err := allocByIDTxn(txn.Txn, nil, svc.AllocID)
		if err != nil {
			return err
		}
		if alloc == nil || alloc.NodeID != svc.NodeID || alloc.ClientTerminalStatus() {
			continue
		}
		row := svc.Copy()
		row.CreateIndex, row.ModifyIndex = txn.Index, txn.Index
		existing, err := txn.First(tableServiceRegistrations, indexID, svc.ID)
		if err != nil {
			return fmt.Errorf("state: service registration lookup: %w", err)
		}
		if existing != nil {
			old := existing.(*structs.ServiceRegistration)
			if sameRegistration(old, row) {
				continue
			}
			row.CreateIndex = old.CreateIndex
		}
		if err := txn.Insert(tableServiceRegistrations, row); err != nil {
			return fmt.Errorf("state: service registration insert: %w", err)
		}
		changed = true
	}
	return txn.bumpIndexIf(changed, tableServiceRegistrations)
}

func sameRegistration(a, b *structs.ServiceRegistration) bool {
	return a.ID == b.ID && a.ServiceName == b.ServiceName && a.Namespace == b.Namespace && a.NodeID == b.NodeID &&
		a.Datacenter == b.Datacenter && a.JobID == b.JobID && a.AllocID == b.AllocID && a.Address == b.Address &&
		a.Port == b.Port && slices.Equal(a.Tags, b.Tags)
}

// DeleteServiceRegistrationByIDTxn removes one registration of namespace; an unknown ID (or
// one of another namespace) is a 404.
func (s *StateStore) DeleteServiceRegistrationByIDTxn(txn *Txn, namespace, id string) error {
	existing, err := txn.First(tableServiceRegistrations, indexID, id)
	if err != nil {
		return fmt.Errorf("state: service registration lookup: %w", err)
	}
	if existing == nil || existing.(*structs.ServiceRegistration).Namespace != namespace {
		return structs.NotFound(structs.ErrServiceRegistrationNotFound)
	}
	if err := txn.Delete(tableServiceRegistrations, existing); err != nil {
		return fmt.Errorf("state: service registration delete: %w", err)
	}
	return txn.bumpIndex(tableServiceRegistrations)
}

// deleteServiceRegistrationsTxn removes every registration matching index and args, within
// the write that ended their allocation or removed their node.
func (s *StateStore) deleteServiceRegistrationsTxn(txn *Txn, index string, args ...any) error {
	iter, err := txn.Get(tableServiceRegistrations, index, args...)
	if err != nil {
		return fmt.Errorf("state: service registration list: %w", err)
	}
	return deleteRows(txn, "service registration", tableServiceRegistrations, collect[*structs.ServiceRegistration](iter))
}

func (s *StateStore) deleteAllocServiceRegistrationsTxn(txn *Txn, allocID string) error {
	return s.deleteServiceRegistrationsTxn(txn, indexAllocID, allocID)
}

func (s *StateStore) deleteNodeServiceRegistrationsTxn(txn *Txn, nodeID string) error {
	return s.deleteServiceRegistrationsTxn(txn, indexNodeID, nodeID)
}

// ServiceRegistrationByID reads one registration; nil when unknown.
func (s *StateStore) ServiceRegistrationByID(ws memdb.WatchSet, id string) (*structs.ServiceRegistration, error) {
	return first[*structs.ServiceRegistration](s.db.Txn(false), ws, "service registration lookup", tableServiceRegistrations, indexID, id)
}

// ServiceRegistrations lists the registrations of a namespace ("*": of every namespace),
// by namespace, service name and ID.
func (s *StateStore) ServiceRegistrations(ws memdb.WatchSet, namespace string) ([]*structs.ServiceRegistration, error) {
	if namespace == structs.AllNamespacesSentinel {
		return s.serviceRegistrationsBy(ws, indexServiceName+"_prefix", "")
	}
	return s.serviceRegistrationsBy(ws, indexServiceName+"_prefix", namespace, "")
}

// ServiceRegistrationsByName lists the instances of one service of a namespace.
func (s *StateStore) ServiceRegistrationsByName(ws memdb.WatchSet, namespace, name string) ([]*structs.ServiceRegistration, error) {
	return s.serviceRegistrationsBy(ws, indexServiceName, namespace, name)
}

// ServiceRegistrationsByJob lists the registrations of a job's allocations.
func (s *StateStore) ServiceRegistrationsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.ServiceRegistration, error) {
	return s.serviceRegistrationsBy(ws, indexJob, namespace, jobID)
}

// ServiceRegistrationsByAlloc lists the registrations of one allocation.
func (s *StateStore) ServiceRegistrationsByAlloc(ws memdb.WatchSet, allocID string) ([]*structs.ServiceRegistration, error) {
	return s.serviceRegistrationsBy(ws, indexAllocID, allocID)
}

// ServiceRegistrationsByNode lists the registrations made by one node.
func (s *StateStore) ServiceRegistrationsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.ServiceRegistration, error) {
	return s.serviceRegistrationsBy(ws, indexNodeID, nodeID)
}

func (s *StateStore) serviceRegistrationsBy(ws memdb.WatchSet, index string, args ...any) ([]*structs.ServiceRegistration, error) {
	out, err := list[*structs.ServiceRegistration](s.db.Txn(false), ws, "service registration list", tableServiceRegistrations, index, args...)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *structs.ServiceRegistration) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		if c := strings.Compare(a.ServiceName, b.ServiceName); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}
