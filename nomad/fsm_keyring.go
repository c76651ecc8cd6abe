package nomad

import (
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

func (f *FSM) registerKeyringCommands() {
	f.registerCommand(structs.KeyringUpsertRootKeyRequestType, f.applyKeyringUpsertRootKey)
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
