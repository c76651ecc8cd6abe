package structs

import (
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// A node identity is a JWT the servers sign with the active root key for one node, fetched by
// the node's client with its secret and renewed before it expires. It names the node, and
// the servers accept it for that node's own calls as they accept its secret. Like the secret,
// it is never logged or shown in an API answer: GET /v1/client/identity shows its claims only.

// DefaultNodeIdentityTTL is a node identity's lifetime when its node pool sets none.
const DefaultNodeIdentityTTL = 24 * time.Hour

// NodeIdentityAudience is the audience of node identities.
const NodeIdentityAudience = "nomadproject.io"

// NodeIdentityClaims are the claims of a node identity.
type NodeIdentityClaims struct {
	NodeID         string `json:"nomad_node_id"`
	NodePool       string `json:"nomad_node_pool"`
	NodeClass      string `json:"nomad_node_class"`
	NodeDatacenter string `json:"nomad_node_datacenter"`
	jwt.Claims
}

// NodeIdentitySubject is the subject of a node's identity (our format).
func NodeIdentitySubject(region string, n *Node) string {
	return "node:" + region + ":" + n.Datacenter + ":" + n.NodePool + ":" + n.ID
}

// NodeIdentitySignRequest asks for a fresh identity of NodeID; AuthToken is the node's secret
// (or its current identity).
type NodeIdentitySignRequest struct {
	NodeID string
	QueryOptions
}

// NodeIdentitySignResponse holds the identity. JWT is a secret.
type NodeIdentitySignResponse struct {
	JWT string `codec:"JWT" json:"-"`
	// Expiration is the exp claim, Unix seconds.
	Expiration int64
	QueryMeta
}

// Client introduction tokens: JWTs an operator hands to a new client so that it can introduce
// its node to the cluster. How strictly the servers require them is
// server.client_introduction.enforcement.
const (
	// DefaultIntroductionTokenTTL is client_introduction.default_identity_ttl when unset.
	DefaultIntroductionTokenTTL = 5 * time.Minute
	// MaxIntroductionTokenTTL is client_introduction.max_identity_ttl when unset.
	MaxIntroductionTokenTTL = 30 * time.Minute
	// IntroductionTokenAudience is the audience of introduction tokens, so that no other
	// identity passes for one.
	IntroductionTokenAudience = "nomadproject.io/client-introduction"
)

// Enforcement levels of client_introduction, upstream's names.
const (
	// NodeIntroductionEnforcementNone registers a new node without a token, silently.
	NodeIntroductionEnforcementNone = "none"
	// NodeIntroductionEnforcementWarn registers it and logs a warning naming the node.
	NodeIntroductionEnforcementWarn = "warn"
	// NodeIntroductionEnforcementStrict refuses it.
	NodeIntroductionEnforcementStrict = "strict"
)

// ValidNodeIntroductionEnforcement reports whether s names an enforcement level.
func ValidNodeIntroductionEnforcement(s string) bool {
	switch s {
	case NodeIntroductionEnforcementNone, NodeIntroductionEnforcementWarn, NodeIntroductionEnforcementStrict:
		return true
	}
	return false
}

// ClientIntroductionClaims are the claims of an introduction token.
type ClientIntroductionClaims struct {
	NodePool string `json:"nomad_node_pool"`
	NodeName string `json:"nomad_node_name,omitempty"`
	jwt.Claims
}

// ClientIntroductionTokenRequest is api.ACLIdentityClientIntroductionTokenRequest.
type ClientIntroductionTokenRequest struct {
	TTL      time.Duration
	NodeName string
	NodePool string
	WriteRequest
}

// ClientIntroductionTokenResponse holds the token (a secret, answered to its requester only).
type ClientIntroductionTokenResponse struct {
	JWT string
	WriteMeta
}
