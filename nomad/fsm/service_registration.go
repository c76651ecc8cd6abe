package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerServiceRegistrationCommands() {
	handle(f, structs.ServiceRegistrationUpsertRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ServiceRegistrationUpsertRequest) error {
		return s.UpsertServiceRegistrationsTxn(txn, req.Services)
	})
	handle(f, structs.ServiceRegistrationDeleteRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.ServiceRegistrationDeleteByIDRequest) error {
		return s.DeleteServiceRegistrationByIDTxn(txn, req.Namespace, req.ID)
	})
}
