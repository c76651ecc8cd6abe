package nomad

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Keyring is the root key RPC endpoint. Its answers never carry private key material.
type Keyring struct {
	srv *Server
}

// ListPublic returns the public half of every root key, for /.well-known/jwks.json. Like
// upstream, it needs no token: public keys are meant to be fetched by anyone verifying a
// workload identity.
func (k *Keyring) ListPublic(args *structs.KeyringListPublicRequest, reply *structs.KeyringListPublicResponse) error {
	if done, err := k.srv.forwardRead("Keyring.ListPublic", &args.QueryOptions, args, reply); done {
		return err
	}
	return k.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		keys, err := store.RootKeys(ws)
		if err != nil {
			return 0, err
		}
		reply.PublicKeys = make([]*structs.RootKeyPublic, 0, len(keys))
		for _, key := range keys {
			reply.PublicKeys = append(reply.PublicKeys, key.Public())
		}
		return store.Index("root_keys"), nil
	})
}

// initializeKeyring makes the cluster's first root key when there is none. It runs on the
// leader after the barrier, so a key written by an earlier leader is already in the state.
// The key, its ID and its creation time are fixed here, before raftApply: the FSM stays
// deterministic.
func (s *Server) initializeKeyring(ctx context.Context) error {
	keys, err := s.fsm.State().RootKeys(nil)
	if err != nil {
		return err
	}
	for _, key := range keys {
		if key.State == structs.RootKeyStateActive {
			return nil
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	key, err := newRootKey(time.Now())
	if err != nil {
		return err
	}
	if _, err := s.raftApply(structs.KeyringUpsertRootKeyRequestType, &structs.KeyringUpsertRootKeyRequest{RootKey: key}); err != nil {
		return fmt.Errorf("storing the first root key: %w", err)
	}
	// The key ID only: never the key.
	s.logger.Info("created the cluster's first root key", "key_id", key.KeyID, "algorithm", key.Algorithm)
	return nil
}

// newRootKey generates an active RSA signing key.
func newRootKey(now time.Time) (*structs.RootKey, error) {
	id, err := uuid.GenerateUUID()
	if err != nil {
		return nil, err
	}
	priv, err := rsa.GenerateKey(rand.Reader, structs.RootKeyBits)
	if err != nil {
		return nil, fmt.Errorf("generating a root key: %w", err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	return &structs.RootKey{
		KeyID: id, Algorithm: structs.RootKeyAlgorithm, State: structs.RootKeyStateActive,
		CreateTime: now.UnixNano(), PublicKey: pubDER, PrivateKey: privDER,
	}, nil
}

// authorizeKeyring is the keyring management check: a management token, as upstream.
func (k *Keyring) authorizeKeyring(secret string) error {
	aclObj, _, err := k.srv.resolveACL(secret)
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() && !aclObj.IsDisabled() {
		return structs.PermissionDenied("management token required to manage the keyring")
	}
	return nil
}

// List lists the root keys' metadata, oldest first; never key material.
func (k *Keyring) List(args *structs.KeyringListRequest, reply *structs.KeyringListResponse) error {
	if done, err := k.srv.forwardRead("Keyring.List", &args.QueryOptions, args, reply); done {
		return err
	}
	if err := k.authorizeKeyring(args.AuthToken); err != nil {
		return err
	}
	return k.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
		keys, err := store.RootKeys(ws)
		if err != nil {
			return 0, err
		}
		reply.Keys = make([]*structs.RootKeyMeta, 0, len(keys))
		for _, key := range keys {
			reply.Keys = append(reply.Keys, key.Meta())
		}
		return store.Index("root_keys"), nil
	})
}

// Rotate makes a new active root key; the active one becomes inactive in the same entry.
func (k *Keyring) Rotate(args *structs.KeyringRotateRootKeyRequest, reply *structs.KeyringRotateRootKeyResponse) error {
	if done, err := k.srv.forward("Keyring.Rotate", args, reply); done {
		return err
	}
	if err := k.authorizeKeyring(args.AuthToken); err != nil {
		return err
	}
	if err := k.srv.checkLeader(); err != nil {
		return err
	}
	key, err := newRootKey(now())
	if err != nil {
		return err
	}
	args.RootKey = key
	index, err := k.srv.raftApply(structs.KeyringRotateRootKeyRequestType, args)
	if err != nil {
		return err
	}
	stored := *key
	stored.CreateIndex, stored.ModifyIndex = index, index
	reply.Key = stored.Meta()
	reply.Index = index
	// The key ID only: never the key.
	k.srv.logger.Info("rotated the root key", "key_id", key.KeyID)
	return nil
}

// Delete removes an inactive root key: an unknown key is a 404, the active one a 400.
func (k *Keyring) Delete(args *structs.KeyringDeleteRootKeyRequest, reply *structs.GenericResponse) error {
	if done, err := k.srv.forward("Keyring.Delete", args, reply); done {
		return err
	}
	if err := k.authorizeKeyring(args.AuthToken); err != nil {
		return err
	}
	if err := k.srv.checkLeader(); err != nil {
		return err
	}
	keys, err := k.srv.State().RootKeys(nil)
	if err != nil {
		return err
	}
	var found *structs.RootKey
	for _, key := range keys {
		if key.KeyID == args.KeyID {
			found = key
		}
	}
	if found == nil {
		return structs.NotFound(structs.ErrRootKeyNotFound)
	}
	if found.State == structs.RootKeyStateActive {
		return structs.BadRequest("active root key %s cannot be deleted: rotate first", args.KeyID)
	}
	index, err := k.srv.raftApply(structs.KeyringDeleteRootKeyRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
