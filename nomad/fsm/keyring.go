package fsm

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerKeyringCommands() {
	handle(f, structs.KeyringUpsertRootKeyRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.KeyringUpsertRootKeyRequest) error {
		txn.Meta.Actor = structs.ActorKeyring
		return s.UpsertRootKeyTxn(txn, req.RootKey)
	})
	handle(f, structs.KeyringRotateRootKeyRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.KeyringRotateRootKeyRequest) error {
		txn.Meta.Actor = structs.ActorKeyring
		return s.RotateRootKeyTxn(txn, req.RootKey)
	})
	handle(f, structs.KeyringDeleteRootKeyRequestType, func(s *state.StateStore, txn *state.Txn, req *structs.KeyringDeleteRootKeyRequest) error {
		txn.Meta.Actor = structs.ActorKeyring
		return s.DeleteRootKeyTxn(txn, req.KeyID)
	})
}
