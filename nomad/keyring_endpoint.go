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
