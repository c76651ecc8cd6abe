package structs

import "time"

// OneTimeTokenTTL is how long a one-time token may be exchanged, as upstream.
const OneTimeTokenTTL = 10 * time.Minute

// OneTimeToken stands for an ACL token (AccessorID) until it is exchanged once for that
// token's secret, or expires. OneTimeSecretID is itself a secret: it is never published.
type OneTimeToken struct {
	OneTimeSecretID string
	AccessorID      string
	ExpiresAt       time.Time
	CreateIndex     uint64
	ModifyIndex     uint64
}

// OneTimeTokenUpsertRequest stores a one-time token the leader made for the caller's token.
type OneTimeTokenUpsertRequest struct {
	Token *OneTimeToken
	WriteRequest
}

// OneTimeTokenUpsertResponse answers PUT /v1/acl/token/onetime.
type OneTimeTokenUpsertResponse struct {
	OneTimeToken *OneTimeToken
	WriteMeta
}

// OneTimeTokenDeleteRequest removes one-time tokens: the exchange of one (Exchange true: the
// apply fails when it is already gone, so two exchanges of one secret never both succeed) or
// the leader's removal of expired ones.
type OneTimeTokenDeleteRequest struct {
	Secrets  []string
	Exchange bool
	WriteRequest
}

// OneTimeTokenExchangeRequest trades a one-time secret for its ACL token.
type OneTimeTokenExchangeRequest struct {
	OneTimeSecretID string
	WriteRequest
}

// OneTimeTokenExchangeResponse carries the ACL token, with its secret.
type OneTimeTokenExchangeResponse struct {
	Token *ACLToken
	WriteMeta
}
