package nomad

import (
	"crypto/subtle"

	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/structs"
)

// aclUpsertOneTimeToken makes a one-time token for the caller's own ACL token, good for one
// exchange within structs.OneTimeTokenTTL. Only a real token may ask: anonymous callers have
// nothing to hand over.
var aclUpsertOneTimeToken = write("ACL.UpsertOneTimeToken", spec[structs.OneTimeTokenUpsertRequest, structs.OneTimeTokenUpsertResponse]{
	Authorize: aclOwnToken[structs.OneTimeTokenUpsertRequest]("an ACL token is required to create a one-time token"),
	Serve: func(c *rpcCall, _ *structs.OneTimeTokenUpsertRequest, reply *structs.OneTimeTokenUpsertResponse) error {
		token, err := c.srv.State().ACLTokenBySecretID(nil, c.token)
		if err != nil {
			return err
		}
		if token == nil {
			return structs.PermissionDenied("%s", structs.ErrTokenNotFound.Error())
		}
		secret, err := uuid.GenerateUUID()
		if err != nil {
			return err
		}
		ott := &structs.OneTimeToken{OneTimeSecretID: secret, AccessorID: token.AccessorID, ExpiresAt: now().Add(structs.OneTimeTokenTTL).UTC()}
		index, err := c.srv.raftApply(structs.OneTimeTokenUpsertRequestType, &structs.OneTimeTokenUpsertRequest{Token: ott})
		if err != nil {
			return err
		}
		ott.CreateIndex, ott.ModifyIndex = index, index
		reply.OneTimeToken, reply.Index = ott, index
		return nil
	},
})

// UpsertOneTimeToken makes a one-time token standing for the caller's token.
func (a *ACL) UpsertOneTimeToken(args *structs.OneTimeTokenUpsertRequest, reply *structs.OneTimeTokenUpsertResponse) error {
	return aclUpsertOneTimeToken.Call(a.srv, args, reply)
}

// aclExchangeOneTimeToken trades a one-time secret for its ACL token, once. The secret is the
// caller's only credential; an unknown, expired or already exchanged one is refused alike.
var aclExchangeOneTimeToken = write("ACL.ExchangeOneTimeToken", spec[structs.OneTimeTokenExchangeRequest, structs.OneTimeTokenExchangeResponse]{
	Caller: callerAnyone,
	// The one-time secret is the credential; an ACL token sent along is not read.
	Prepare:   func(req *structs.OneTimeTokenExchangeRequest) error { req.AuthToken = ""; return nil },
	Authorize: aclEnabled[structs.OneTimeTokenExchangeRequest],
	Validate: func(req *structs.OneTimeTokenExchangeRequest) error {
		if req.OneTimeSecretID == "" {
			return structs.BadRequest("missing OneTimeSecretID")
		}
		return nil
	},
	Serve: func(c *rpcCall, req *structs.OneTimeTokenExchangeRequest, reply *structs.OneTimeTokenExchangeResponse) error {
		refused := structs.PermissionDenied("one-time token not found or expired")
		store := c.srv.State()
		ott, err := store.OneTimeTokenBySecret(req.OneTimeSecretID)
		if err != nil {
			return err
		}
		if ott == nil || subtle.ConstantTimeCompare([]byte(ott.OneTimeSecretID), []byte(req.OneTimeSecretID)) != 1 ||
			!now().Before(ott.ExpiresAt) {
			return refused
		}
		token, err := store.ACLTokenByAccessorID(nil, ott.AccessorID)
		if err != nil {
			return err
		}
		if token == nil || token.IsExpired(now()) {
			return refused
		}
		// The delete fails when another exchange got there first: one secret, one token.
		index, err := c.srv.raftApply(structs.OneTimeTokenDeleteRequestType,
			&structs.OneTimeTokenDeleteRequest{Secrets: []string{req.OneTimeSecretID}, Exchange: true})
		if err != nil {
			return err
		}
		reply.Token, reply.Index = token, index
		return nil
	},
})

// ExchangeOneTimeToken trades a one-time secret for the ACL token it stands for.
func (a *ACL) ExchangeOneTimeToken(args *structs.OneTimeTokenExchangeRequest, reply *structs.OneTimeTokenExchangeResponse) error {
	return aclExchangeOneTimeToken.Call(a.srv, args, reply)
}

// reapExpiredOneTimeTokens removes expired one-time tokens through Raft; the leader calls it
// with the token reaper.
func (s *Server) reapExpiredOneTimeTokens() error {
	expired, err := s.State().ExpiredOneTimeTokens(now(), expiredTokenReapBatch)
	if err != nil || len(expired) == 0 {
		return err
	}
	_, err = s.raftApply(structs.OneTimeTokenDeleteRequestType, &structs.OneTimeTokenDeleteRequest{Secrets: expired})
	return err
}
