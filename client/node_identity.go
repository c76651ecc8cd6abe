package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/nomadfork/nomad/structs"
)

// The node's identity: a JWT the servers sign for this node, fetched once the node is
// registered and renewed at half its remaining lifetime (or when asked through
// /v1/client/identity/renew). It is kept in memory only and never logged; the API shows its
// claims, never the token.

type nodeIdentity struct {
	jwt string
	exp time.Time
}

// fetchNodeIdentity asks the servers for a fresh identity and keeps it.
func (c *Client) fetchNodeIdentity() error {
	var reply structs.NodeIdentitySignResponse
	err := c.servers.SignNodeIdentity(&structs.NodeIdentitySignRequest{
		NodeID:       c.node.ID,
		QueryOptions: structs.QueryOptions{Region: c.config.Region, AuthToken: c.node.SecretID, AllowStale: true},
	}, &reply)
	if err != nil {
		return fmt.Errorf("fetching the node identity: %w", err)
	}
	if reply.JWT == "" {
		return errors.New("fetching the node identity: the servers signed none")
	}
	c.idMu.Lock()
	c.nodeID = &nodeIdentity{jwt: reply.JWT, exp: time.Unix(reply.Expiration, 0)}
	c.idMu.Unlock()
	return nil
}

// nodeIdentityLoop keeps the node's identity fresh until shutdown.
func (c *Client) nodeIdentityLoop() {
	defer c.wg.Done()
	for {
		// A failure is retried slowly: the API fetches on demand when it has none.
		wait := 30 * c.config.RetryInterval
		if err := c.fetchNodeIdentity(); err != nil {
			c.logger.Warn("node identity not renewed", "error", err)
		} else {
			c.idMu.Lock()
			wait = max(time.Until(c.nodeID.exp)/2, c.config.RetryInterval)
			c.idMu.Unlock()
		}
		t := time.NewTimer(wait)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-c.identityRenewed:
			// Renewed through the API: wait from the new expiry.
			t.Stop()
			c.idMu.Lock()
			wait = max(time.Until(c.nodeID.exp)/2, c.config.RetryInterval)
			c.idMu.Unlock()
			t = time.NewTimer(wait)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// RenewNodeIdentity fetches a fresh node identity now.
func (c *Client) RenewNodeIdentity() error {
	if err := c.fetchNodeIdentity(); err != nil {
		return err
	}
	select {
	case c.identityRenewed <- struct{}{}:
	default:
	}
	return nil
}

// NodeIdentityClaims are the claims of the node's current identity (fetched first when the
// node has none yet).
func (c *Client) NodeIdentityClaims() (map[string]any, error) {
	c.idMu.Lock()
	id := c.nodeID
	c.idMu.Unlock()
	if id == nil {
		if err := c.fetchNodeIdentity(); err != nil {
			return nil, err
		}
		c.idMu.Lock()
		id = c.nodeID
		c.idMu.Unlock()
	}
	// The token came from the servers over an authenticated connection; its claims are read
	// for display only, nothing here trusts them.
	parsed, err := jwt.ParseSigned(id.jwt, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return nil, fmt.Errorf("node identity: %w", err)
	}
	claims := map[string]any{}
	if err := parsed.UnsafeClaimsWithoutVerification(&claims); err != nil {
		return nil, fmt.Errorf("node identity: %w", err)
	}
	return claims, nil
}

// introTokenFile is where an operator may leave the client introduction token, in the
// client's state directory, as upstream.
const introTokenFile = "intro_token.jwt"

// introduction is what the node shows the servers when it registers, in case they do not
// know it (first start, or after the GC removed it): the identity they signed for it while it
// is valid, otherwise the configured introduction token, otherwise the one in the state
// directory. Servers that know the node ignore it.
func (c *Client) introduction() string {
	c.idMu.Lock()
	id := c.nodeID
	c.idMu.Unlock()
	if id != nil && time.Until(id.exp) > time.Minute {
		return id.jwt
	}
	if c.config.IntroToken != "" {
		return c.config.IntroToken
	}
	if c.config.StateDir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(c.config.StateDir, introTokenFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.logger.Warn("reading the client introduction token", "error", err)
		}
		return ""
	}
	return strings.TrimSpace(string(b))
}
