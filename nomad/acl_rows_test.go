package nomad

import (
	"testing"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestACLRows_StaleTokenSetAside: the ACL calls that need no token (bootstrap, login, the
// one-time exchange, the auth-method list) answer a caller still sending a token that no
// longer exists as they answer one sending none, instead of refusing it as unknown.
func TestACLRows_StaleTokenSetAside(t *testing.T) {
	srv, _ := testACLServer(t, nil)
	const stale = "00000000-0000-0000-0000-00000000dead"
	write := structs.WriteRequest{AuthToken: stale}

	err := srv.Endpoints.ACL.Bootstrap(&BootstrapRequest{WriteRequest: write}, &structs.ACLTokenUpsertResponse{})
	must.Eq(t, 400, structs.ErrorCode(err))
	must.StrContains(t, err.Error(), "ACL bootstrap already done")

	err = srv.Endpoints.ACL.Login(&structs.ACLLoginRequest{AuthMethodName: "nope", LoginToken: "x", WriteRequest: write}, &structs.ACLTokenUpsertResponse{})
	must.Eq(t, 404, structs.ErrorCode(err))

	err = srv.Endpoints.ACL.ExchangeOneTimeToken(&structs.OneTimeTokenExchangeRequest{
		OneTimeSecretID: "00000000-0000-0000-0000-0000000000aa", WriteRequest: write}, &structs.OneTimeTokenExchangeResponse{})
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.StrContains(t, err.Error(), "one-time token not found or expired")

	err = srv.Endpoints.ACL.ListAuthMethods(&structs.QueryOptions{AuthToken: stale}, &AuthMethodListResponse{})
	must.NoError(t, err)

	// A call that does read the token still refuses the stale one.
	err = srv.Endpoints.ACL.GetPolicySelf(&structs.QueryOptions{AuthToken: stale}, &PolicyListResponse{})
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.StrContains(t, err.Error(), structs.ErrTokenNotFound.Error())
}

// TestACLRows_OwnTokenCalls: resolving one's token and trading it for a one-time token need
// a token of one's own, whatever it grants; the anonymous caller is refused with its message.
func TestACLRows_OwnTokenCalls(t *testing.T) {
	srv, root := testACLServer(t, nil)
	must.NoError(t, srv.Endpoints.ACL.UpsertPolicies(&structs.ACLPolicyUpsertRequest{
		Policies:     []*structs.ACLPolicy{{Name: "nothing", Rules: `namespace "none" { policy = "deny" }`}},
		WriteRequest: structs.WriteRequest{AuthToken: root}}, &structs.GenericResponse{}))
	var made structs.ACLTokenUpsertResponse
	must.NoError(t, srv.Endpoints.ACL.UpsertTokens(&structs.ACLTokenUpsertRequest{
		Tokens:       []*structs.ACLToken{{Name: "plain", Type: structs.ACLClientToken, Policies: []string{"nothing"}}},
		WriteRequest: structs.WriteRequest{AuthToken: root}}, &made))
	plain := made.Tokens[0]

	var self SingleTokenResponse
	err := srv.Endpoints.ACL.ResolveSelf(&structs.QueryOptions{}, &self)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.StrContains(t, err.Error(), structs.ErrTokenNotFound.Error())
	must.NoError(t, srv.Endpoints.ACL.ResolveSelf(&structs.QueryOptions{AuthToken: plain.SecretID}, &self))
	must.Eq(t, plain.AccessorID, self.Token.AccessorID)

	var ott structs.OneTimeTokenUpsertResponse
	err = srv.Endpoints.ACL.UpsertOneTimeToken(&structs.OneTimeTokenUpsertRequest{}, &ott)
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.StrContains(t, err.Error(), "an ACL token is required to create a one-time token")
	must.NoError(t, srv.Endpoints.ACL.UpsertOneTimeToken(&structs.OneTimeTokenUpsertRequest{
		WriteRequest: structs.WriteRequest{AuthToken: plain.SecretID}}, &ott))
	must.Eq(t, plain.AccessorID, ott.OneTimeToken.AccessorID)

	// Reading another token is still management's.
	err = srv.Endpoints.ACL.GetToken(&TokenSpecificRequest{AccessorID: "other",
		QueryOptions: structs.QueryOptions{AuthToken: plain.SecretID}}, &SingleTokenResponse{})
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
}

// TestACLRows_DisabledIs400: with ACLs off the ACL calls, even those open to anyone, answer
// 400 rather than the disabled ACL's "allowed"; the client introduction token, which needs
// only node write, is still signed.
func TestACLRows_DisabledIs400(t *testing.T) {
	srv := testServer(t, nil)
	err := srv.Endpoints.ACL.ListAuthMethods(&structs.QueryOptions{}, &AuthMethodListResponse{})
	must.Eq(t, 400, structs.ErrorCode(err))
	must.StrContains(t, err.Error(), structs.ErrACLDisabled.Error())
	err = srv.Endpoints.ACL.ListTokens(&structs.QueryOptions{AuthToken: "anything"}, &TokenListResponse{})
	must.Eq(t, 400, structs.ErrorCode(err))

	var intro structs.ClientIntroductionTokenResponse
	must.NoError(t, srv.Endpoints.ACL.CreateClientIntroductionToken(&structs.ClientIntroductionTokenRequest{}, &intro))
	must.NotEq(t, "", intro.JWT)
}
