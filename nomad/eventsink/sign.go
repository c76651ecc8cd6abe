package eventsink

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// SignatureHeader carries the body's HMAC; a receiver recomputes it with the shared secret.
const SignatureHeader = "X-Nomad-Signature"

// signaturePrefix names the hash, so a receiver can refuse what it does not expect.
const signaturePrefix = "sha256="

// Sign is the header value for body keyed with secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether header is body's signature with secret, comparing in constant time:
// what a receiver does with each delivery.
func Verify(secret string, body []byte, header string) bool {
	got, ok := strings.CutPrefix(header, signaturePrefix)
	if !ok {
		return false
	}
	sum, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(sum, mac.Sum(nil))
}

// Default retry bounds: the first retry comes soon (a receiver restarting), the longest wait
// keeps a receiver that is down for hours from being hit more than twice a minute.
const (
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// backoff is the wait before retry number attempt (0 for the first retry): min doubled per
// attempt, capped at max.
func backoff(attempt int, min, max time.Duration) time.Duration {
	d := min
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d
}
