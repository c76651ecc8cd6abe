package nomad

import (
	"testing"
	"time"

	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// TestEvalGet_NamespaceOfTheEvaluation: reading an evaluation needs read-job in its own
// namespace, whichever the request names; an unknown one is answered empty to a caller who
// may read jobs somewhere and refused to one who may read them nowhere.
func TestEvalGet_NamespaceOfTheEvaluation(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	eval := testEval("e-read", "web", structs.EvalStatusComplete)
	_, err := srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}})
	must.NoError(t, err)
	reader := clientToken(t, srv, mgmt, "reader", `namespace "default" { capabilities = ["read-job"] }`).SecretID
	otherReader := clientToken(t, srv, mgmt, "other-reader", `namespace "other" { capabilities = ["read-job"] }`).SecretID
	nodeReader := clientToken(t, srv, mgmt, "node-reader", `node { policy = "read" }`).SecretID

	get := func(id, token, namespace string) (*structs.Evaluation, error) {
		var reply structs.SingleEvalResponse
		err := srv.Endpoints.Eval.GetEval(&structs.EvalSpecificRequest{EvalID: id,
			QueryOptions: structs.QueryOptions{AuthToken: token, Namespace: namespace}}, &reply)
		return reply.Eval, err
	}

	got, err := get("e-read", reader, "other")
	must.NoError(t, err)
	must.Eq(t, "e-read", got.ID)

	got, err = get("e-read", otherReader, "other")
	must.ErrorIs(t, err, structs.ErrPermissionDenied)
	must.ErrorContains(t, err, `read-job capability required in namespace "default"`)
	must.Nil(t, got)

	got, err = get("e-unknown", otherReader, "")
	must.NoError(t, err)
	must.Nil(t, got)

	for _, token := range []string{nodeReader, ""} {
		_, err = get("e-unknown", token, "")
		must.ErrorIs(t, err, structs.ErrPermissionDenied)
		must.Eq(t, 403, structs.ErrorCode(err))
		_, err = get("e-read", token, "")
		must.ErrorIs(t, err, structs.ErrPermissionDenied)
	}
}

// TestKeyringListPublic_IgnoresToken: the public keys are answered whatever token the caller
// sends, a stale one included, as when the call read no token at all.
func TestKeyringListPublic_IgnoresToken(t *testing.T) {
	srv, _ := testACLServer(t, nil)
	var reply structs.KeyringListPublicResponse
	waitFor(t, 5*time.Second, func() bool {
		reply = structs.KeyringListPublicResponse{}
		err := srv.Endpoints.Keyring.ListPublic(&structs.KeyringListPublicRequest{
			QueryOptions: structs.QueryOptions{AuthToken: "00000000-0000-0000-0000-00000000dead"}}, &reply)
		must.NoError(t, err)
		return len(reply.PublicKeys) > 0
	})
}
