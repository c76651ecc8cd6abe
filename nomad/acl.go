package nomad

import (
	"crypto/subtle"
	"sort"
	"strings"
	"sync"

	"github.com/nomadfork/nomad/acl"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// anonymousActor is who a request without a token is, when ACLs are on.
var anonymousActor = &structs.Actor{AccessorID: structs.AnonymousTokenAccessorID, Name: "Anonymous Token", Type: structs.ActorTypeAnonymous}

// resolveACL turns a secret into the caller's compiled ACL and identity. With ACLs disabled it
// returns acl.DisabledACL and no actor. The secret never appears in an error.
func (s *Server) resolveACL(secret string) (*acl.ACL, *structs.Actor, error) {
	if !s.config.ACLEnabled {
		return acl.DisabledACL, nil, nil
	}
	store := s.State()
	if secret == "" {
		aclObj, err := s.compileACL(store, []string{structs.AnonymousPolicyName}, nil)
		if err != nil {
			return nil, nil, err
		}
		return aclObj, anonymousActor, nil
	}
	if looksLikeJWT(secret) {
		return s.resolveWorkloadIdentity(store, secret)
	}
	token, err := store.ACLTokenBySecretID(nil, secret)
	if err != nil {
		return nil, nil, err
	}
	// The memdb lookup finds the row by secret; comparing again in constant time keeps the
	// final decision free of timing differences between near-miss secrets.
	if token == nil || subtle.ConstantTimeCompare([]byte(token.SecretID), []byte(secret)) != 1 {
		return nil, nil, structs.PermissionDenied("%s", structs.ErrTokenNotFound.Error())
	}
	if token.IsExpired(now()) {
		return nil, nil, structs.PermissionDenied("%s", structs.ErrTokenExpired.Error())
	}
	if token.IsManagement() {
		return acl.ManagementACL, token.Actor(), nil
	}
	aclObj, err := s.compileACL(store, token.Policies, token.Roles)
	if err != nil {
		return nil, nil, err
	}
	return aclObj, token.Actor(), nil
}

// compileACL builds the ACL of a set of policies and roles, from the cache when the same
// policy contents were compiled before.
func (s *Server) compileACL(store *state.StateStore, policyNames []string, roles []*structs.ACLTokenRoleLink) (*acl.ACL, error) {
	names := append([]string(nil), policyNames...)
	for _, link := range roles {
		role, err := store.ACLRoleByID(nil, link.ID)
		if err != nil {
			return nil, err
		}
		if role == nil {
			continue
		}
		for _, p := range role.Policies {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	var policies []*structs.ACLPolicy
	var key strings.Builder
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		p, err := store.ACLPolicyByName(nil, name)
		if err != nil {
			return nil, err
		}
		if p == nil {
			// A policy deleted after the token was made grants nothing.
			continue
		}
		policies = append(policies, p)
		key.WriteString(p.Name)
		key.WriteByte(0)
		key.Write(p.Hash)
		key.WriteByte(0)
	}
	if cached := s.aclCache.get(key.String()); cached != nil {
		return cached, nil
	}
	parsed := make([]*acl.Policy, 0, len(policies))
	for _, p := range policies {
		pol, err := acl.Parse(p.Rules)
		if err != nil {
			// Stored policies were validated on write; one that no longer parses grants
			// nothing rather than failing every request of its holders.
			s.logger.Warn("stored ACL policy does not parse", "policy", p.Name, "error", err)
			continue
		}
		parsed = append(parsed, pol)
	}
	aclObj, err := acl.NewACL(false, parsed)
	if err != nil {
		return nil, err
	}
	s.aclCache.put(key.String(), aclObj)
	return aclObj, nil
}

// aclCache maps the names and hashes of a policy set to its compiled ACL. Keys change whenever
// a policy's content changes, so entries never go stale; the cache is dropped whole when it
// grows past its bound and on any policy delete.
type aclCache struct {
	mu      sync.Mutex
	entries map[string]*acl.ACL
}

const aclCacheMax = 1024

func newACLCache() *aclCache { return &aclCache{entries: map[string]*acl.ACL{}} }

func (c *aclCache) get(key string) *acl.ACL {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key]
}

func (c *aclCache) put(key string, a *acl.ACL) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= aclCacheMax {
		c.entries = map[string]*acl.ACL{}
	}
	c.entries[key] = a
}

func (c *aclCache) purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = map[string]*acl.ACL{}
}

// namespaceReader authorizes a list in opts.Namespace ("" is default) and returns whether an
// object in a given namespace may be shown. A single namespace needs capability there, checked
// now; "*" lists every namespace and shows only objects where the caller holds it.
func (s *Server) namespaceReader(opts *structs.QueryOptions, capability string) (func(namespace string) bool, error) {
	aclObj, _, err := s.resolveACL(opts.AuthToken)
	if err != nil {
		return nil, err
	}
	if opts.Namespace == "" {
		opts.Namespace = structs.DefaultNamespace
	}
	if opts.Namespace != structs.AllNamespacesSentinel {
		if !aclObj.AllowNamespaceOperation(opts.Namespace, capability) {
			return nil, structs.PermissionDenied("%s capability required in namespace %q", capability, opts.Namespace)
		}
		return func(string) bool { return true }, nil
	}
	return func(namespace string) bool { return aclObj.AllowNamespaceOperation(namespace, capability) }, nil
}
