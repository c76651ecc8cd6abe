package nomad

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/hashicorp/go-uuid"
	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Workload identities are signed by whichever server is asked, with the active root key of
// its own state: every server holds the keyring (it is replicated through Raft), so signing
// needs no leader. They are verified against every root key still in the keyring, active or
// not, like /.well-known/jwks.json publishes them.

// identityLeeway is the clock skew tolerated between the server that signed an identity and
// the one that verifies it.
const identityLeeway = 30 * time.Second

// errInvalidIdentity is the one answer to a workload identity that does not verify; it never
// carries the token.
func errInvalidIdentity(reason string) error {
	return structs.PermissionDenied("invalid workload identity: %s", reason)
}

// rootKeyCache holds parsed root keys by key ID. A key ID's material never changes once
// stored (state.UpsertRootKeyTxn refuses it), so an entry never goes stale; a deleted key's
// entry is never consulted because lookups start from the state.
type rootKeyCache struct {
	mu   sync.Mutex
	keys map[string]*rsa.PrivateKey
	pubs map[string]crypto.PublicKey
}

const rootKeyCacheMax = 64

func (c *rootKeyCache) private(key *structs.RootKey) (*rsa.PrivateKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.keys[key.KeyID]; k != nil {
		return k, nil
	}
	raw, err := x509.ParsePKCS8PrivateKey(key.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("root key %s: %w", key.KeyID, err)
	}
	priv, ok := raw.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("root key %s: not an RSA key", key.KeyID)
	}
	if c.keys == nil || len(c.keys) >= rootKeyCacheMax {
		c.keys = map[string]*rsa.PrivateKey{}
	}
	c.keys[key.KeyID] = priv
	return priv, nil
}

func (c *rootKeyCache) public(key *structs.RootKey) (crypto.PublicKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.pubs[key.KeyID]; k != nil {
		return k, nil
	}
	pub, err := x509.ParsePKIXPublicKey(key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("root key %s: %w", key.KeyID, err)
	}
	if c.pubs == nil || len(c.pubs) >= rootKeyCacheMax {
		c.pubs = map[string]crypto.PublicKey{}
	}
	c.pubs[key.KeyID] = pub
	return pub, nil
}

// activeRootKey is the key new identities are signed with.
func activeRootKey(store *state.StateStore) (*structs.RootKey, error) {
	keys, err := store.RootKeys(nil)
	if err != nil {
		return nil, err
	}
	for i := len(keys) - 1; i >= 0; i-- {
		if keys[i].State == structs.RootKeyStateActive {
			return keys[i], nil
		}
	}
	return nil, errors.New("no active root key: the keyring is not initialized yet")
}

// signWorkloadIdentity signs the identity ident of task in alloc at now. The caller checked
// that the allocation is not terminal and that the task and identity are its job's.
func (s *Server) signWorkloadIdentity(store *state.StateStore, alloc *structs.Allocation, task string,
	ident string, audience []string, ttl time.Duration, now time.Time) (*structs.SignedWorkloadIdentity, error) {
	jti, err := uuid.GenerateUUID()
	if err != nil {
		return nil, err
	}
	if ident == structs.WorkloadIdentityDefaultName && len(audience) == 0 {
		audience = []string{structs.WorkloadIdentityDefaultAudience}
	}
	claims := structs.IdentityClaims{
		Namespace:    alloc.Namespace,
		JobID:        structs.IdentityJobID(alloc),
		AllocationID: alloc.ID,
		TaskName:     task,
		Claims: jwt.Claims{
			Subject:  structs.IdentitySubject(s.config.Region, alloc.Namespace, structs.IdentityJobID(alloc), alloc.TaskGroup, task, ident),
			Audience: jwt.Audience(audience),
			IssuedAt: jwt.NewNumericDate(now),
			// Verifiers allow identityLeeway, so a server whose clock runs a little behind
			// the signer's still accepts a fresh identity.
			NotBefore: jwt.NewNumericDate(now),
			ID:        jti,
		},
	}
	out := &structs.SignedWorkloadIdentity{
		WorkloadIdentityRequest: structs.WorkloadIdentityRequest{AllocID: alloc.ID, TaskName: task, IdentityName: ident},
	}
	if ttl > 0 {
		exp := now.Add(ttl)
		claims.Expiry = jwt.NewNumericDate(exp)
		out.Expiration = exp.Unix()
	}
	token, err := s.signJWT(store, claims)
	if err != nil {
		return nil, err
	}
	out.JWT = token
	return out, nil
}

// signJWT signs claims with the active root key of store, naming the key in the kid header.
func (s *Server) signJWT(store *state.StateStore, claims any) (string, error) {
	key, err := activeRootKey(store)
	if err != nil {
		return "", err
	}
	priv, err := s.rootKeys.private(key)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(key.Algorithm), Key: priv},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), key.KeyID))
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// looksLikeJWT tells a compact JWS from an ACL token secret (a UUID, no dots).
func looksLikeJWT(secret string) bool {
	return strings.Count(secret, ".") == 2 && strings.HasPrefix(secret, "eyJ")
}

// verifyWorkloadIdentity checks a workload identity's signature against the keyring (by its
// kid) and its time claims at now, then that its allocation exists and is not terminal. It
// returns the claims and the allocation.
func (s *Server) verifyWorkloadIdentity(store *state.StateStore, token string, now time.Time) (*structs.IdentityClaims, *structs.Allocation, error) {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, nil, errInvalidIdentity("malformed token")
	}
	if len(parsed.Headers) != 1 || parsed.Headers[0].KeyID == "" {
		return nil, nil, errInvalidIdentity("no key ID")
	}
	kid := parsed.Headers[0].KeyID
	keys, err := store.RootKeys(nil)
	if err != nil {
		return nil, nil, err
	}
	var key *structs.RootKey
	for _, k := range keys {
		if k.KeyID == kid {
			key = k
			break
		}
	}
	if key == nil {
		return nil, nil, errInvalidIdentity("unknown signing key")
	}
	pub, err := s.rootKeys.public(key)
	if err != nil {
		return nil, nil, err
	}
	var claims structs.IdentityClaims
	if err := parsed.Claims(pub, &claims); err != nil {
		return nil, nil, errInvalidIdentity("bad signature")
	}
	// No audience is required here: every identity of the task may call the API, as upstream.
	if err := claims.Claims.ValidateWithLeeway(jwt.Expected{Time: now}, identityLeeway); err != nil {
		return nil, nil, errInvalidIdentity("expired or not yet valid")
	}
	if claims.AllocationID == "" || claims.TaskName == "" {
		return nil, nil, errInvalidIdentity("missing claims")
	}
	alloc, err := store.AllocByID(nil, claims.AllocationID)
	if err != nil {
		return nil, nil, err
	}
	if alloc == nil || alloc.Namespace != claims.Namespace || structs.IdentityJobID(alloc) != claims.JobID {
		return nil, nil, errInvalidIdentity("allocation not found")
	}
	if alloc.TerminalStatus() {
		return nil, nil, errInvalidIdentity("allocation is terminal")
	}
	return &claims, alloc, nil
}

// resolveWorkloadIdentity is resolveACL for a workload identity: the policies attached to its
// job, group or task (ACLPolicy.JobACL) plus read and list of its job's variables at
// nomad/jobs, nomad/jobs/<job>, nomad/jobs/<job>/<group> and nomad/jobs/<job>/<group>/<task>,
// as upstream grants them. Its actor names the identity's subject and allocation, and the
// token it acts on behalf of; it has no accessor of its own.
func (s *Server) resolveWorkloadIdentity(store *state.StateStore, token string) (*acl.ACL, *structs.Actor, error) {
	claims, alloc, err := s.verifyWorkloadIdentity(store, token, now())
	if err != nil {
		return nil, nil, err
	}
	policies, err := store.ACLPolicies(nil, "")
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, p := range policies {
		if jobACLMatches(p.JobACL, claims.Namespace, claims.JobID, alloc.TaskGroup, claims.TaskName) {
			names = append(names, p.Name)
		}
	}
	aclObj, err := s.compileACL(store, names, nil)
	if err != nil {
		return nil, nil, err
	}
	base := "nomad/jobs"
	job := base + "/" + claims.JobID
	group := job + "/" + alloc.TaskGroup
	aclObj = aclObj.WithWorkloadVariables(claims.Namespace, base, job, group, group+"/"+claims.TaskName)
	actor := &structs.Actor{Type: structs.ActorTypeWorkloadIdentity, Name: claims.Subject, AllocID: alloc.ID,
		OnBehalfOf: onBehalfOf(store, alloc.Job)}
	return aclObj, actor, nil
}

// onBehalfOf is the token that registered the job version an allocation runs. A version
// stored before versions recorded SubmittedBy still names its token's accessor
// (NomadTokenID); its name is then read from the token if it still exists.
func onBehalfOf(store *state.StateStore, job *structs.Job) *structs.OnBehalfOf {
	switch {
	case job == nil:
		return nil
	case job.SubmittedBy != nil:
		o := *job.SubmittedBy
		return &o
	case job.NomadTokenID != "":
		o := &structs.OnBehalfOf{AccessorID: job.NomadTokenID}
		if token, err := store.ACLTokenByAccessorID(nil, job.NomadTokenID); err == nil && token != nil {
			o.Name = token.Name
		}
		return o
	}
	return nil
}

// jobACLMatches reports whether a policy's job binding covers a task: same namespace and
// job, and the group and task when the binding names them.
func jobACLMatches(j *structs.JobACL, namespace, jobID, group, task string) bool {
	if j == nil || j.JobID == "" {
		return false
	}
	ns := j.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	if ns != namespace || j.JobID != jobID {
		return false
	}
	if j.Group != "" && j.Group != group {
		return false
	}
	return j.Task == "" || (j.Group != "" && j.Task == task)
}
