package nomad

import (
	"errors"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/nomadfork/nomad/state"
	"github.com/nomadfork/nomad/structs"
)

// Client introduction: a node the cluster does not know yet must show, when it registers over
// a client connection, an introduction token an operator created for it (or an identity the
// servers signed for its node ID before, so that a node the GC removed comes back on its
// own). Without one, server.client_introduction.enforcement decides: none lets it in, warn
// lets it in and logs, strict refuses. A plain connection taken only because of
// rpc_upgrade_mode is held to strict whatever the setting: upgrade mode exists to move
// known nodes to TLS, never to let a stranger in without TLS or a token.
//
// Nodes already registered re-register with their secret and never need a token; the agent's
// own in-process client and callers with node write access do not either.

// introWarnInterval spaces the warnings of warn mode: a stranger retrying in a loop must not
// fill the log, and the first warning names the node.
const introWarnInterval = 10 * time.Second

// introWarnLimiter lets one warning through per interval and counts the ones it held back.
type introWarnLimiter struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// allow reports whether to log now, and how many warnings were held back since the last one.
func (l *introWarnLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < introWarnInterval {
		l.suppressed++
		return false, 0
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return true, n
}

// checkIntroduction decides whether node, unknown to the cluster, may register with
// args.IntroToken. It runs on the leader, after forwarding, so that the state it reads is the
// newest and one server's setting governs.
func (s *Server) checkIntroduction(args *structs.NodeRegisterRequest) error {
	enforcement := s.config.ClientIntroduction.Enforcement
	if args.PlainConn {
		enforcement = structs.NodeIntroductionEnforcementStrict
	}
	if enforcement == structs.NodeIntroductionEnforcementNone {
		return nil
	}
	node := args.Node
	reason := s.verifyIntroduction(s.State(), args.IntroToken, node, now())
	if reason == nil {
		return nil
	}
	if enforcement == structs.NodeIntroductionEnforcementWarn {
		if ok, held := s.introWarn.allow(now()); ok {
			s.logger.Warn("node registered without a valid client introduction token; "+
				"server.client_introduction.enforcement = \"strict\" would refuse it",
				"node_name", node.Name, "node_id", node.ID, "node_pool", introPool(node),
				"reason", reason.Error(), "warnings_held_back", held)
		}
		return nil
	}
	why := "server.client_introduction.enforcement is strict"
	if args.PlainConn {
		why = "the connection has no TLS, which rpc_upgrade_mode allows only for nodes already registered or introduced"
	}
	return structs.PermissionDenied("node %q (%s) may not register: %v; %s: create a token with `nomad node intro create -node-name=%s -node-pool=%s` and give it to the client (NOMAD_CLIENT_INTRO_TOKEN, -client-intro-token or <state_dir>/intro_token.jwt)",
		node.Name, node.ID, reason, why, node.Name, introPool(node))
}

func introPool(n *structs.Node) string {
	if n.NodePool == "" {
		return structs.DefaultNodePool
	}
	return n.NodePool
}

var (
	errNoIntroToken       = errors.New("no client introduction token")
	errIntroTokenInvalid  = errors.New("the client introduction token is not signed by this cluster, or is malformed")
	errIntroTokenExpired  = errors.New("the client introduction token has expired or is not valid yet")
	errIntroTokenPoolName = errors.New("the client introduction token is for another node pool or node name")
)

// verifyIntroduction returns nil when token introduces node: an introduction token signed by a
// root key of the keyring, within its lifetime, whose pool is the node's and whose name, when
// it has one, is the node's; or a valid identity of the node's ID. Otherwise it says why,
// without repeating the token.
func (s *Server) verifyIntroduction(store *state.StateStore, token string, node *structs.Node, now time.Time) error {
	if token == "" {
		return errNoIntroToken
	}
	if s.verifyNodeIdentity(store, token, node.ID, now) {
		return nil
	}
	var claims structs.ClientIntroductionClaims
	if err := s.verifySignedClaims(store, token, &claims); err != nil {
		return errIntroTokenInvalid
	}
	expected := jwt.Expected{Time: now, AnyAudience: jwt.Audience{structs.IntroductionTokenAudience}}
	if err := claims.Claims.ValidateWithLeeway(expected, identityLeeway); err != nil {
		if errors.Is(err, jwt.ErrExpired) || errors.Is(err, jwt.ErrNotValidYet) || errors.Is(err, jwt.ErrIssuedInTheFuture) {
			return errIntroTokenExpired
		}
		return errIntroTokenInvalid
	}
	if claims.Expiry == nil {
		return errIntroTokenInvalid
	}
	if claims.NodePool != introPool(node) || (claims.NodeName != "" && claims.NodeName != node.Name) {
		return errIntroTokenPoolName
	}
	return nil
}

// verifySignedClaims checks token's RS256 signature against the root key its kid names and
// decodes its claims into out. Time and audience are the caller's to check.
func (s *Server) verifySignedClaims(store *state.StateStore, token string, out any) error {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return err
	}
	if len(parsed.Headers) != 1 || parsed.Headers[0].KeyID == "" {
		return errors.New("no key ID")
	}
	keys, err := store.RootKeys(nil)
	if err != nil {
		return err
	}
	for _, key := range keys {
		if key.KeyID != parsed.Headers[0].KeyID {
			continue
		}
		pub, err := s.rootKeys.public(key)
		if err != nil {
			return err
		}
		return parsed.Claims(pub, out)
	}
	return errors.New("unknown key ID")
}
