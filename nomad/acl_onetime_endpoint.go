package nomad

import (
	"crypto/subtle"

	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/structs"
)

// UpsertOneTimeToken makes a one-time token for the caller's own ACL token, good for one
// exchange within structs.OneTimeTokenTTL. Only a real token may ask: anonymous callers have
// nothing to hand over.
func (a *ACL) UpsertOneTimeToken(args *structs.OneTimeTokenUpsertRequest, reply *structs.OneTimeTokenUpsertResponse) error {
	if done, err := a.srv.forward("ACL.UpsertOneTimeToken", args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	if _, _, err := a.srv.resolveACL(args.AuthToken); err != nil {
		return err
	}
	if args.AuthToken == "" {
		return structs.PermissionDenied("an ACL token is required to create a one-time token")
	}
	token, err := a.srv.State().ACLTokenBySecretID(nil, args.AuthToken)
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
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	index, err := a.srv.raftApply(structs.OneTimeTokenUpsertRequestType, &structs.OneTimeTokenUpsertRequest{Token: ott})
	if err != nil {
		return err
	}
	ott.CreateIndex, ott.ModifyIndex = index, index
	reply.OneTimeToken, reply.Index = ott, index
	return nil
}

// ExchangeOneTimeToken trades a one-time secret for its ACL token, once. The secret is the
// caller's only credential; an unknown, expired or already exchanged one is refused alike.
func (a *ACL) ExchangeOneTimeToken(args *structs.OneTimeTokenExchangeRequest, reply *structs.OneTimeTokenExchangeResponse) error {
	if done, err := a.srv.forward("ACL.ExchangeOneTimeToken", args, reply); done {
		return err
	}
	if err := a.requireEnabled(); err != nil {
		return err
	}
	if args.OneTimeSecretID == "" {
		return structs.BadRequest("missing OneTimeSecretID")
	}
	a.srv.waitLeaderReady()
	refused := structs.PermissionDenied("one-time token not found or expired")
	store := a.srv.State()
	ott, err := store.OneTimeTokenBySecret(args.OneTimeSecretID)
	if err != nil {
		return err
	}
	if ott == nil || subtle.ConstantTimeCompare([]byte(ott.OneTimeSecretID), []byte(args.OneTimeSecretID)) != 1 ||
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
	if err := a.srv.checkLeader(); err != nil {
		return err
	}
	// The delete fails when another exchange got there first: one secret, one token.
	index, err := a.srv.raftApply(structs.OneTimeTokenDeleteRequestType,
		&structs.OneTimeTokenDeleteRequest{Secrets: []string{args.OneTimeSecretID}, Exchange: true})
	if err != nil {
		return err
	}
	reply.Token, reply.Index = token, index
	return nil
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
