package nomad

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/nomad/api"
	"github.com/nomadfork/nomad/mock"
	"github.com/nomadfork/nomad/structs"
	"github.com/shoenig/test/must"
)

// identityJob is mock.Job whose task exposes its default identity and a named one with a TTL.
func identityJob(id string) *structs.Job {
	job := mock.JobWithID(id)
	task := job.TaskGroups[0].Tasks[0]
	task.Identity = &api.WorkloadIdentity{Env: true, File: true}
	task.Identities = []*api.WorkloadIdentity{{Name: "vault", Audience: []string{"vault.io"}, File: true, TTL: time.Hour}}
	return job
}

// placeIdentityAlloc registers node and places one allocation of job on it.
func placeIdentityAlloc(t *testing.T, srv *Server, token string, node *structs.Node, job *structs.Job, allocID string) *structs.Allocation {
	t.Helper()
	registerNode(t, srv, node, token)
	registerJob(t, srv, token, job)
	stored, err := srv.State().JobByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	alloc := &structs.Allocation{ID: allocID, Name: job.ID + ".web[0]", NodeID: node.ID, TaskGroup: "web", Job: stored}
	testPlaceAllocs(t, srv, stored, alloc)
	return alloc
}

func signIdentities(srv *Server, nodeID, secret string, reqs ...*structs.WorkloadIdentityRequest) (*structs.AllocIdentitiesResponse, error) {
	var reply structs.AllocIdentitiesResponse
	err := srv.Endpoints.Alloc.SignIdentities(&structs.AllocIdentitiesRequest{
		NodeID: nodeID, Identities: reqs, QueryOptions: structs.QueryOptions{AuthToken: secret},
	}, &reply)
	return &reply, err
}

// signOne fetches one identity of the web task as node would, and fails the test otherwise.
func signOne(t *testing.T, srv *Server, node *structs.Node, allocID, identity string) *structs.SignedWorkloadIdentity {
	t.Helper()
	reply, err := signIdentities(srv, node.ID, node.SecretID,
		&structs.WorkloadIdentityRequest{AllocID: allocID, TaskName: "server", IdentityName: identity})
	must.NoError(t, err)
	must.SliceEmpty(t, reply.Rejections)
	must.SliceLen(t, 1, reply.SignedIdentities)
	return reply.SignedIdentities[0]
}

// The identity is a JWT signed by the active root key, named in its kid header, that verifies
// against the public key the JWKS publishes, with upstream's claims.
func TestWorkloadIdentity_SignedClaims(t *testing.T) {
	srv := testServer(t, nil)
	node := mock.Node("n1")
	alloc := placeIdentityAlloc(t, srv, "", node, identityJob("web"), "a1000000-0000-0000-0000-000000000001")

	var pubs structs.KeyringListPublicResponse
	must.NoError(t, srv.Endpoints.Keyring.ListPublic(&structs.KeyringListPublicRequest{}, &pubs))
	must.SliceLen(t, 1, pubs.PublicKeys)
	pub, err := x509.ParsePKIXPublicKey(pubs.PublicKeys[0].PublicKey)
	must.NoError(t, err)

	cases := []struct {
		name     string
		identity string
		wantAud  []string
		wantExp  bool
	}{
		{name: "default", identity: "default", wantAud: []string{"nomad.io"}},
		{name: "named with ttl", identity: "vault", wantAud: []string{"vault.io"}, wantExp: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now().Add(-time.Second)
			signed := signOne(t, srv, node, alloc.ID, tc.identity)
			parsed, err := jwt.ParseSigned(signed.JWT, []jose.SignatureAlgorithm{jose.RS256})
			must.NoError(t, err)
			must.Eq(t, pubs.PublicKeys[0].KeyID, parsed.Headers[0].KeyID)
			var claims structs.IdentityClaims
			must.NoError(t, parsed.Claims(pub, &claims))
			must.Eq(t, "default", claims.Namespace)
			must.Eq(t, "web", claims.JobID)
			must.Eq(t, alloc.ID, claims.AllocationID)
			must.Eq(t, "server", claims.TaskName)
			must.Eq(t, "global:default:web:web:server:"+tc.identity, claims.Subject)
			must.Eq(t, tc.wantAud, []string(claims.Audience))
			must.NotEq(t, "", claims.ID)
			must.True(t, claims.IssuedAt.Time().After(before))
			must.NotNil(t, claims.NotBefore)
			if tc.wantExp {
				must.NotNil(t, claims.Expiry)
				must.Eq(t, claims.Expiry.Time().Unix(), signed.Expiration)
			} else {
				must.Nil(t, claims.Expiry)
				must.Zero(t, signed.Expiration)
			}
		})
	}
}

// A node gets identities only for its own allocations, and only with its own secret.
func TestSecurity_WorkloadIdentity_OnlyOwnNode(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node := mock.Node("n1")
	other := mock.Node("n2")
	alloc := placeIdentityAlloc(t, srv, mgmt, node, identityJob("web"), "a1000000-0000-0000-0000-000000000002")
	registerNode(t, srv, other, mgmt)
	req := &structs.WorkloadIdentityRequest{AllocID: alloc.ID, TaskName: "server", IdentityName: "default"}

	cases := []struct {
		name   string
		nodeID string
		secret string
	}{
		{name: "another node's secret", nodeID: other.ID, secret: other.SecretID},
		{name: "another node claiming to be the node", nodeID: node.ID, secret: other.SecretID},
		{name: "a management token", nodeID: node.ID, secret: mgmt},
		{name: "no secret", nodeID: node.ID, secret: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reply, err := signIdentities(srv, tc.nodeID, tc.secret, req)
			must.Error(t, err)
			must.True(t, strings.HasPrefix(err.Error(), "Permission denied"), must.Sprint(err))
			must.SliceEmpty(t, reply.SignedIdentities)
		})
	}
	// The node itself gets it.
	signOne(t, srv, node, alloc.ID, "default")
}

func TestWorkloadIdentity_Rejections(t *testing.T) {
	srv := testServer(t, nil)
	node := mock.Node("n1")
	alloc := placeIdentityAlloc(t, srv, "", node, identityJob("web"), "a1000000-0000-0000-0000-000000000003")
	cases := []struct {
		name string
		req  *structs.WorkloadIdentityRequest
		want string
	}{
		{name: "unknown task", req: &structs.WorkloadIdentityRequest{AllocID: alloc.ID, TaskName: "nope", IdentityName: "default"},
			want: structs.WIRejectionReasonMissingTask},
		{name: "unknown identity", req: &structs.WorkloadIdentityRequest{AllocID: alloc.ID, TaskName: "server", IdentityName: "nope"},
			want: structs.WIRejectionReasonMissingIdentity},
		{name: "unknown allocation", req: &structs.WorkloadIdentityRequest{AllocID: "nope", TaskName: "server", IdentityName: "default"},
			want: structs.WIRejectionReasonMissingAlloc},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reply, err := signIdentities(srv, node.ID, node.SecretID, tc.req)
			must.NoError(t, err)
			must.SliceEmpty(t, reply.SignedIdentities)
			must.SliceLen(t, 1, reply.Rejections)
			must.Eq(t, tc.want, reply.Rejections[0].Reason)
		})
	}
	_, err := signIdentities(srv, node.ID, node.SecretID)
	must.ErrorContains(t, err, "Identities")

	finishAlloc(t, srv, node, alloc)
	reply, err := signIdentities(srv, node.ID, node.SecretID,
		&structs.WorkloadIdentityRequest{AllocID: alloc.ID, TaskName: "server", IdentityName: "default"})
	must.NoError(t, err)
	must.SliceLen(t, 1, reply.Rejections)
	must.Eq(t, structs.WIRejectionReasonTerminalAlloc, reply.Rejections[0].Reason)
}

// finishAlloc reports the allocation complete from its node.
func finishAlloc(t *testing.T, srv *Server, node *structs.Node, alloc *structs.Allocation) {
	t.Helper()
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.Alloc.UpdateFromClient(&structs.AllocUpdateRequest{
		NodeID:       node.ID,
		Alloc:        []*structs.Allocation{{ID: alloc.ID, ClientStatus: structs.AllocClientStatusComplete}},
		WriteRequest: structs.WriteRequest{AuthToken: node.SecretID},
	}, &gr))
}

func readVar(srv *Server, token, namespace, path string) (*structs.VariablesReadResponse, error) {
	var reply structs.VariablesReadResponse
	err := srv.Endpoints.Variables.Read(&structs.VariablesReadRequest{Path: path,
		QueryOptions: structs.QueryOptions{Namespace: namespace, AuthToken: token}}, &reply)
	return &reply, err
}

// The identity is an API token: it reads its own job's variables, nothing else, and stops
// working once its allocation is terminal. A tampered token or one signed by another
// keyring is refused.
func TestSecurity_WorkloadIdentity_AuthenticatesToAPI(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node := mock.Node("n1")
	alloc := placeIdentityAlloc(t, srv, mgmt, node, identityJob("web"), "a1000000-0000-0000-0000-000000000004")
	for _, p := range []string{"nomad/jobs", "nomad/jobs/web", "nomad/jobs/web/web", "nomad/jobs/web/web/server",
		"nomad/jobs/web/web/other", "nomad/jobs/other", "nomad/jobs/webx", "app/db"} {
		_, err := putVariable(srv, mgmt, structs.VarOpSet, newVar(p, map[string]string{"k": p}))
		must.NoError(t, err)
	}
	wi := signOne(t, srv, node, alloc.ID, "default").JWT

	cases := []struct {
		path  string
		allow bool
	}{
		{"nomad/jobs", true},
		{"nomad/jobs/web", true},
		{"nomad/jobs/web/web", true},
		{"nomad/jobs/web/web/server", true},
		{"nomad/jobs/web/web/other", false},
		{"nomad/jobs/other", false},
		{"nomad/jobs/webx", false},
		{"app/db", false},
	}
	for _, tc := range cases {
		t.Run("read "+tc.path, func(t *testing.T) {
			reply, err := readVar(srv, wi, "default", tc.path)
			if tc.allow {
				must.NoError(t, err)
				must.NotNil(t, reply.Data)
				must.Eq(t, tc.path, reply.Data.Items["k"])
				return
			}
			must.Error(t, err)
			must.True(t, strings.HasPrefix(err.Error(), "Permission denied"), must.Sprint(err))
			must.StrNotContains(t, err.Error(), wi)
		})
	}
	// Read only: no write to its own path.
	before := srv.State().Index("variables")
	_, err := putVariable(srv, wi, structs.VarOpSet, newVar("nomad/jobs/web", map[string]string{"k": "changed"}))
	must.ErrorContains(t, err, "Permission denied")
	must.Eq(t, before, srv.State().Index("variables"))
	// Listing shows its own paths only.
	var list structs.VariablesListResponse
	must.NoError(t, srv.Endpoints.Variables.List(&structs.VariablesListRequest{
		QueryOptions: structs.QueryOptions{Namespace: "default", AuthToken: wi}}, &list))
	var paths []string
	for _, m := range list.Data {
		paths = append(paths, m.Path)
	}
	must.Eq(t, []string{"nomad/jobs", "nomad/jobs/web", "nomad/jobs/web/web", "nomad/jobs/web/web/server"}, paths)
	// Another namespace's same path is not its own.
	_, err = readVar(srv, wi, "other", "nomad/jobs/web")
	must.ErrorContains(t, err, "Permission denied")

	t.Run("actor", func(t *testing.T) {
		_, actor, err := srv.resolveACL(wi)
		must.NoError(t, err)
		must.Eq(t, structs.ActorTypeWorkloadIdentity, actor.Type)
		must.Eq(t, "global:default:web:web:server:default", actor.Name)
		must.Eq(t, "", actor.AccessorID)
	})

	t.Run("tampered", func(t *testing.T) {
		parts := strings.Split(wi, ".")
		claims, err := base64.RawURLEncoding.DecodeString(parts[1])
		must.NoError(t, err)
		forged := strings.Replace(string(claims), `"nomad_job_id":"web"`, `"nomad_job_id":"other"`, 1)
		must.NotEq(t, string(claims), forged)
		token := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + parts[2]
		_, err = readVar(srv, token, "default", "nomad/jobs/other")
		must.ErrorContains(t, err, "Permission denied")
		must.StrNotContains(t, err.Error(), token)
		// A flipped signature byte.
		sig := []byte(parts[2])
		sig[5] ^= 1
		_, err = readVar(srv, parts[0]+"."+parts[1]+"."+string(sig), "default", "nomad/jobs/web")
		must.ErrorContains(t, err, "Permission denied")
	})

	t.Run("other keyring", func(t *testing.T) {
		// Same kid, same claims, another key: what another cluster (or an attacker) signs.
		var claims structs.IdentityClaims
		parsed, err := jwt.ParseSigned(wi, []jose.SignatureAlgorithm{jose.RS256})
		must.NoError(t, err)
		must.NoError(t, parsed.UnsafeClaimsWithoutVerification(&claims))
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		must.NoError(t, err)
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
			(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", parsed.Headers[0].KeyID))
		must.NoError(t, err)
		token, err := jwt.Signed(signer).Claims(claims).Serialize()
		must.NoError(t, err)
		_, err = readVar(srv, token, "default", "nomad/jobs/web")
		must.ErrorContains(t, err, "Permission denied")

		// And an identity of another server's keyring entirely.
		other := testServer(t, nil)
		otherNode := mock.Node("n1")
		otherAlloc := placeIdentityAlloc(t, other, "", otherNode, identityJob("web"), alloc.ID)
		foreign := signOne(t, other, otherNode, otherAlloc.ID, "default").JWT
		_, err = readVar(srv, foreign, "default", "nomad/jobs/web")
		must.ErrorContains(t, err, "unknown signing key")
	})

	t.Run("survives a key rotation", func(t *testing.T) {
		var rot structs.KeyringRotateRootKeyResponse
		must.NoError(t, srv.Endpoints.Keyring.Rotate(&structs.KeyringRotateRootKeyRequest{
			WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &rot))
		_, err := readVar(srv, wi, "default", "nomad/jobs/web")
		must.NoError(t, err)
		fresh := signOne(t, srv, node, alloc.ID, "default").JWT
		parsed, err := jwt.ParseSigned(fresh, []jose.SignatureAlgorithm{jose.RS256})
		must.NoError(t, err)
		must.Eq(t, rot.Key.KeyID, parsed.Headers[0].KeyID)
	})

	t.Run("terminal allocation", func(t *testing.T) {
		finishAlloc(t, srv, node, alloc)
		_, err := readVar(srv, wi, "default", "nomad/jobs/web")
		must.ErrorContains(t, err, "allocation is terminal")
	})
}

// Policies bound to the job through JobACL are the identity's too, with the group and task
// bounds upstream gives them.
func TestWorkloadIdentity_JobACLPolicies(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node := mock.Node("n1")
	alloc := placeIdentityAlloc(t, srv, mgmt, node, identityJob("web"), "a1000000-0000-0000-0000-000000000005")
	_, err := putVariable(srv, mgmt, structs.VarOpSet, newVar("shared/db", map[string]string{"k": "v"}))
	must.NoError(t, err)
	wi := signOne(t, srv, node, alloc.ID, "default").JWT

	_, err = readVar(srv, wi, "default", "shared/db")
	must.ErrorContains(t, err, "Permission denied")

	cases := []struct {
		name  string
		bind  *structs.JobACL
		allow bool
	}{
		{name: "other job", bind: &structs.JobACL{Namespace: "default", JobID: "other"}},
		{name: "other group", bind: &structs.JobACL{Namespace: "default", JobID: "web", Group: "db"}},
		{name: "other task", bind: &structs.JobACL{Namespace: "default", JobID: "web", Group: "web", Task: "sidecar"}},
		{name: "the job", bind: &structs.JobACL{Namespace: "default", JobID: "web"}, allow: true},
		{name: "the task", bind: &structs.JobACL{Namespace: "default", JobID: "web", Group: "web", Task: "server"}, allow: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "bound-" + string(rune('a'+i))
			var gr structs.GenericResponse
			must.NoError(t, srv.Endpoints.ACL.UpsertPolicies(&structs.ACLPolicyUpsertRequest{
				Policies:     []*structs.ACLPolicy{{Name: name, Rules: varPolicy("default", "shared/*", `"read"`), JobACL: tc.bind}},
				WriteRequest: structs.WriteRequest{AuthToken: mgmt},
			}, &gr))
			t.Cleanup(func() {
				var gr structs.GenericResponse
				_ = srv.Endpoints.ACL.DeletePolicies(&structs.ACLPolicyDeleteRequest{Names: []string{name},
					WriteRequest: structs.WriteRequest{AuthToken: mgmt}}, &gr)
			})
			_, err := readVar(srv, wi, "default", "shared/db")
			if tc.allow {
				must.NoError(t, err)
			} else {
				must.ErrorContains(t, err, "Permission denied")
			}
		})
	}
}

// A write made with a workload identity names it in the event: an actor of type
// workload-identity with its subject and allocation, no accessor of its own, the token that
// registered its job version as on-behalf-of, and never the JWT.
func TestWorkloadIdentity_ActorInEvents(t *testing.T) {
	srv, mgmt := testACLServer(t, nil)
	node := mock.Node("n1")
	alloc := placeIdentityAlloc(t, srv, mgmt, node, identityJob("web"), "a1000000-0000-0000-0000-000000000006")
	registerJob(t, srv, mgmt, mock.JobWithID("other"))
	var gr structs.GenericResponse
	must.NoError(t, srv.Endpoints.ACL.UpsertPolicies(&structs.ACLPolicyUpsertRequest{
		Policies: []*structs.ACLPolicy{{Name: "web-deployer", Rules: `namespace "default" { policy = "write" }`,
			JobACL: &structs.JobACL{Namespace: "default", JobID: "web"}}},
		WriteRequest: structs.WriteRequest{AuthToken: mgmt},
	}, &gr))
	wi := signOne(t, srv, node, alloc.ID, "default").JWT

	sub, err := srv.Endpoints.Event.Subscribe(&EventStreamRequest{
		Topics: map[structs.Topic][]string{structs.TopicJob: {"other"}}, Namespace: "default",
		Index: srv.State().LatestIndex(), AuthToken: mgmt,
	})
	must.NoError(t, err)
	t.Cleanup(sub.Unsubscribe)

	var reply structs.JobDeregisterResponse
	must.NoError(t, srv.Endpoints.Job.Deregister(&structs.JobDeregisterRequest{JobID: "other",
		WriteRequest: structs.WriteRequest{Namespace: "default", AuthToken: wi}}, &reply))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	batch, err := sub.Next(ctx)
	must.NoError(t, err)
	must.SliceNotEmpty(t, batch.Events)
	payload, ok := batch.Events[0].Payload.(*structs.JobEvent)
	must.True(t, ok, must.Sprintf("%T", batch.Events[0].Payload))
	token, err := srv.State().ACLTokenBySecretID(nil, mgmt)
	must.NoError(t, err)
	must.Eq(t, &structs.Actor{Type: structs.ActorTypeWorkloadIdentity, Name: "global:default:web:web:server:default",
		AllocID: alloc.ID, OnBehalfOf: &structs.OnBehalfOf{AccessorID: token.AccessorID, Name: token.Name}}, payload.Actor)
	raw, err := json.Marshal(batch)
	must.NoError(t, err)
	must.StrNotContains(t, string(raw), wi)
}
