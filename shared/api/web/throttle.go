package web

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"

	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/ratelimit"
)

// Throttle spends from per-address and per-key token buckets in Redis.
type Throttle struct {
	Limiter *ratelimit.Limiter
	// PerIP is config.AuthPerIP: the burst, and the refill per minute, of
	// an address's bucket.
	PerIP int
	Log   *slog.Logger
}

// Bucket is a token-bucket limit: a burst and a steady rate per second.
type Bucket struct {
	Burst     int
	PerSecond float64
}

// LogInPerEmail makes guessing slow (10 tries, then one every 30 s) whether
// or not the account exists. Per address the limit is config.AuthPerIP, a
// generous one: a carrier's NAT puts thousands of fans behind one IPv4
// address, so the address only stops a single client hammering the service.
var LogInPerEmail = Bucket{10, 1.0 / 30}

// IP spends a token of the per-address bucket named kind.
func (s *Throttle) IP(r *http.Request, kind string) error {
	ip, ok := ClientIP(r)
	if !ok {
		return nil
	}
	return s.Take(r, kind+":ip:"+ip, Bucket{s.PerIP, float64(s.PerIP) / 60})
}

// Take spends one token of a bucket. When Redis is down it lets the
// request through (fail open): sessions are stateless and must keep working.
func (s *Throttle) Take(r *http.Request, key string, b Bucket) error {
	wait, err := s.Limiter.Allow(r.Context(), key, b.Burst, b.PerSecond)
	if err != nil {
		s.Log.Warn("throttle skipped", "key", key, "err", err)
		return nil
	}
	if wait > 0 {
		return problem.New(http.StatusTooManyRequests, "too-many-attempts",
			"Too many attempts. Wait a little (see Retry-After) and try again.").RetryIn(wait)
	}
	return nil
}

// EmailKey is a bucket name for an email, in any case, without storing it.
func EmailKey(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return hex.EncodeToString(sum[:12])
}

// ClientIP is the viewer's address: CloudFront-Viewer-Address behind
// CloudFront (and the local gateway, which sets it the same way), else the
// peer. An IPv6 address counts as its /64, the block one subscriber gets.
// A request CloudFront forwarded without the viewer's address has none
// (ok false): its peer is an edge server that many viewers share.
func ClientIP(r *http.Request) (ip string, ok bool) {
	addr := r.RemoteAddr
	if v := r.Header.Get("CloudFront-Viewer-Address"); v != "" {
		addr = v // "ip:port", IPv6 unbracketed
	} else if r.Header.Get("X-Amz-Cf-Id") != "" {
		return "", false
	}
	if i := strings.LastIndexByte(addr, ':'); i > 0 {
		addr = addr[:i]
	}
	a, err := netip.ParseAddr(strings.Trim(addr, "[]"))
	if err != nil {
		return "", false
	}
	if a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return p.String(), true
	}
	return a.Unmap().String(), true
}
