package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerKeyringCommands() {
	f.registerCommand(structs.KeyringUpsertRootKeyRequestType, f.applyKeyringUpsertRootKey)
	f.registerCommand(structs.KeyringRotateRootKeyRequestType, f.applyKeyringRotateRootKey)
	f.registerCommand(structs.KeyringDeleteRootKeyRequestType, f.applyKeyringDeleteRootKey)
}

func (f *FSM) applyKeyringUpsertRootKey(buf []byte, index uint64) any {
	var req structs.KeyringUpsertRootKeyRequest
	decode(buf, &req, structs.KeyringUpsertRootKeyRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.KeyringUpsertRootKeyRequestType, index, &state.TxnMeta{Actor: structs.ActorKeyring})
	defer txn.Abort()
	if err := store.UpsertRootKeyTxn(txn, req.RootKey); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyKeyringRotateRootKey(buf []byte, index uint64) any {
	var req structs.KeyringRotateRootKeyRequest
	decode(buf, &req, structs.KeyringRotateRootKeyRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.KeyringRotateRootKeyRequestType, index, &state.TxnMeta{Actor: structs.ActorKeyring})
	defer txn.Abort()
	if err := store.RotateRootKeyTxn(txn, req.RootKey); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func (f *FSM) applyKeyringDeleteRootKey(buf []byte, index uint64) any {
	var req structs.KeyringDeleteRootKeyRequest
	decode(buf, &req, structs.KeyringDeleteRootKeyRequestType, index)
	store := f.State()
	txn := store.WriteTxn(structs.KeyringDeleteRootKeyRequestType, index, &state.TxnMeta{Actor: structs.ActorKeyring})
	defer txn.Abort()
	if err := store.DeleteRootKeyTxn(txn, req.KeyID); err != nil {
		return err
	}
	txn.Commit()
	return nil
}
