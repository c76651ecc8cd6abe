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

// keyringListPublic answers the public half of every root key, for /.well-known/jwks.json.
// Like upstream, it needs no token: public keys are meant to be fetched by anyone verifying a
// workload identity, so a token the caller sends is set aside, whatever it is.
var keyringListPublic = read("Keyring.ListPublic", spec[structs.KeyringListPublicRequest, structs.KeyringListPublicResponse]{
	Caller:    callerAnyone,
	Prepare:   func(req *structs.KeyringListPublicRequest) error { req.AuthToken = ""; return nil },
	Authorize: anyone[structs.KeyringListPublicRequest],
	Serve: func(c *rpcCall, req *structs.KeyringListPublicRequest, reply *structs.KeyringListPublicResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			keys, err := store.RootKeys(ws)
			if err != nil {
				return 0, err
			}
			reply.PublicKeys = views(keys, (*structs.RootKey).Public)
			return store.Index("root_keys"), nil
		})
	},
})

// ListPublic returns the public half of every root key; it needs no token.
func (k *Keyring) ListPublic(args *structs.KeyringListPublicRequest, reply *structs.KeyringListPublicResponse) error {
	return keyringListPublic.Call(k.srv, args, reply)
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

// The keyring's management rows need a management token, as upstream.

// keyringList lists the root keys' metadata, oldest first; never key material.
var keyringList = read("Keyring.List", spec[structs.KeyringListRequest, structs.KeyringListResponse]{
	Authorize: management[structs.KeyringListRequest]("manage the keyring"),
	Serve: func(c *rpcCall, req *structs.KeyringListRequest, reply *structs.KeyringListResponse) error {
		return c.srv.blockingRPC(&req.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, store *state.StateStore) (uint64, error) {
			keys, err := store.RootKeys(ws)
			if err != nil {
				return 0, err
			}
			reply.Keys = views(keys, (*structs.RootKey).Meta)
			return store.Index("root_keys"), nil
		})
	},
})

// keyringRotate makes a new active root key; the active one becomes inactive in the same
// entry.
var keyringRotate = write("Keyring.Rotate", spec[structs.KeyringRotateRootKeyRequest, structs.KeyringRotateRootKeyResponse]{
	Authorize: management[structs.KeyringRotateRootKeyRequest]("manage the keyring"),
	Serve: func(c *rpcCall, req *structs.KeyringRotateRootKeyRequest, reply *structs.KeyringRotateRootKeyResponse) error {
		key, err := newRootKey(now())
		if err != nil {
			return err
		}
		req.RootKey = key
		index, err := c.srv.raftApply(structs.KeyringRotateRootKeyRequestType, req)
		if err != nil {
			return err
		}
		stored := *key
		stored.CreateIndex, stored.ModifyIndex = index, index
		reply.Key = stored.Meta()
		reply.Index = index
		// The key ID only: never the key.
		c.srv.logger.Info("rotated the root key", "key_id", key.KeyID)
		return nil
	},
})

// keyringDelete removes an inactive root key: an unknown key is a 404, the active one a 400.
var keyringDelete = write("Keyring.Delete", spec[structs.KeyringDeleteRootKeyRequest, structs.GenericResponse]{
	Authorize: management[structs.KeyringDeleteRootKeyRequest]("manage the keyring"),
	Serve: func(c *rpcCall, req *structs.KeyringDeleteRootKeyRequest, reply *structs.GenericResponse) error {
		keys, err := c.srv.State().RootKeys(nil)
		if err != nil {
			return err
		}
		var found *structs.RootKey
		for _, key := range keys {
			if key.KeyID == req.KeyID {
				found = key
			}
		}
		if found == nil {
			return structs.NotFound(structs.ErrRootKeyNotFound)
		}
		if found.State == structs.RootKeyStateActive {
			return structs.BadRequest("active root key %s cannot be deleted: rotate first", req.KeyID)
		}
		index, err := c.srv.raftApply(structs.KeyringDeleteRootKeyRequestType, req)
		if err != nil {
			return err
		}
		reply.Index = index
		return nil
	},
})

// List lists the root keys' metadata, oldest first; never key material.
func (k *Keyring) List(args *structs.KeyringListRequest, reply *structs.KeyringListResponse) error {
	return keyringList.Call(k.srv, args, reply)
}

// Rotate makes a new active root key.
func (k *Keyring) Rotate(args *structs.KeyringRotateRootKeyRequest, reply *structs.KeyringRotateRootKeyResponse) error {
	return keyringRotate.Call(k.srv, args, reply)
}

// Delete removes an inactive root key.
func (k *Keyring) Delete(args *structs.KeyringDeleteRootKeyRequest, reply *structs.GenericResponse) error {
	return keyringDelete.Call(k.srv, args, reply)
}
